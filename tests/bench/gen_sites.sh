#!/bin/sh
# Writes N functions, each calling hook() on a line of its own with a lock
# in the struct its parameter points to (a heap lock named by type).
n=${1:-10000}
awk -v n="$n" 'BEGIN {
	for (i = 0; i < n; i++)
		printf "__attribute__((noinline)) void site_%d(struct bench_heap *q);\n__attribute__((noinline)) void site_%d(struct bench_heap *q) { hook(&q->lock); __asm__ volatile(\"\"); }\n", i, i;
	print "static void call_all_sites(struct bench_heap *q)\n{";
	for (i = 0; i < n; i++)
		printf "\tsite_%d(q);\n", i;
	print "}";
}'
