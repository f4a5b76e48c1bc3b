#!/bin/sh
# Writes N functions, each calling hook() on a line of its own.
n=${1:-10000}
awk -v n="$n" 'BEGIN {
	for (i = 0; i < n; i++)
		printf "__attribute__((noinline)) void site_%d(void);\n__attribute__((noinline)) void site_%d(void) { hook(); __asm__ volatile(\"\"); }\n", i, i;
	print "static void call_all_sites(void)\n{";
	for (i = 0; i < n; i++)
		printf "\tsite_%d();\n", i;
	print "}";
}'
