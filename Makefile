# syncprof build pipeline:
#   vmlinux.h -> bpf/**/*.bpf.o -> skel/*.skel.h -> build/user/**/*.o -> ./syncprof
# user/ is one folder per stage of the pipeline: target/ (processes), probes/
# (what each mode attaches), waits/ (the waits read: snapshots, the off-CPU
# calls), unwind/, debuginfo/ (where a module's DWARF comes from), symbols/,
# report/ (the table: rows, columns, names), format/ (each --format's
# printer: table, CSV, JSON, folded, pprof), live/ (the live screen),
# session/ (a run's stages: start, reports, following); main, options and
# log stay at the top (docs/design.md draws the stages).
# Quiet by default; V=1 shows the commands.

ARCH        := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
OUT         := build
BIN         := syncprof
# The BPF objects and skeletons are the same in every build.
BPF_OUT     := build/bpf
BPFTOOL     ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
CLANG       ?= clang
CC          ?= cc
CXX         ?= g++
PYTHON      ?= /usr/bin/python3
VMLINUX     := vmlinux-headers/$(ARCH)/vmlinux.h

# Debian packages.  DEB_BUILD_PKGS: what building syncprof and running
# the demo need (make demo installs only these); DEB_PKGS: those and what
# the tests need (make test).  A library syncprof links goes in the first.
DEB_BUILD_PKGS := clang llvm gcc binutils make pkg-config libc6-dev libbpf-dev \
               bpftool libelf-dev libdw-dev zlib1g-dev libcapstone-dev \
               libiberty-dev util-linux procps
# The live screen (ncurses), --format pprof (protobuf-c), JSON (jansson),
# --serve (libmicrohttpd), debuginfod's client header (syncprof dlopens
# libdebuginfod.so.1).
DEB_BUILD_PKGS += libncurses-dev libprotobuf-c-dev protobuf-c-compiler \
               libjansson-dev libmicrohttpd-dev libdebuginfod-dev
DEB_PKGS    := $(DEB_BUILD_PKGS) g++ libcmocka-dev python3 rustc
# The runtime tests' targets: GLib's locks (and C++20's, with g++ above),
# a musl-linked program (the notices; Go's are built with golang-go), and
# Debian's QEMU, whose exported lock wrappers the built-in list names.
DEB_PKGS    += libglib2.0-dev musl-tools qemu-system-x86
# A real multi-process server for --children: PostgreSQL and its pgbench.
DEB_PKGS    += postgresql-15
# make install's tests render the man page.
DEB_PKGS    += man-db groff-base
# The live screen's tests drive it in tmux, a real terminal; go tool pprof
# reads the profiles back.
DEB_PKGS    += tmux golang-go
# --serve's tests scrape it with Debian's Prometheus (and its promtool).
DEB_PKGS    += prometheus
# The pictures' tests draw pprof's flame graph and speedscope's in
# headless Chromium and read back what it rendered.
DEB_PKGS    += chromium
# speedscope draws folded stacks and Chrome traces offline; it is no
# Debian package: make deps installs it from the npm registry under
# $(OUT)/npm, with the machine's npm (Debian's npm where there is none).
SPEEDSCOPE  := speedscope@1.25.0
NPM_DIR     := $(OUT)/npm

# The tests serve debug files with elfutils' own debuginfod.  MariaDB's
# mariadbd: the InnoDB notice on a server that exports no symbol.
DEB_PKGS    += debuginfod mariadb-server-core

# make fuzz: clang's libFuzzer and sanitizer runtimes.
DEB_PKGS    += libclang-rt-14-dev

# --record writes uftrace's data format; the tests read it with uftrace.
DEB_PKGS    += uftrace

# make bench compares with bpftrace doing full mode's job, and loads
# memcached with memcaslap (section servers), and a private MariaDB
# (mariadb-server-core above; mariadb-install-db needs the client core's
# my_print_defaults) with sysbench (section duty_mariadb).  Not the
# mariadb-server package: its install starts the system's instance.
ifeq ($(BENCH),1)
DEB_PKGS    += bpftrace memcached libmemcached-tools mariadb-client-core sysbench
endif

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Recursive (=) so pkg-config runs only once the packages are there.
LIB_CFLAGS   = $(shell pkg-config --cflags libbpf libdw libelf capstone 2>/dev/null)
LIB_LDLIBS   = $(shell pkg-config --libs libbpf libdw libelf capstone 2>/dev/null) -lz -lm
# libiberty: the demangler of binutils (C++, legacy and v0 Rust), and
# the hash tables pprof.c dedups with.
LIB_LDLIBS  += -liberty
LIB_CFLAGS  += $(shell pkg-config --cflags libprotobuf-c 2>/dev/null)
LIB_LDLIBS  += $(shell pkg-config --libs libprotobuf-c 2>/dev/null || echo -lprotobuf-c)
# jansson: --format json (user/text/jsonout.c).
LIB_CFLAGS  += $(shell pkg-config --cflags jansson 2>/dev/null)
LIB_LDLIBS  += $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson)
# ncursesw: the live screen (user/live/).
LIB_CFLAGS  += $(shell pkg-config --cflags ncursesw 2>/dev/null)
LIB_LDLIBS  += $(shell pkg-config --libs ncursesw 2>/dev/null || echo -lncursesw)
# libmicrohttpd: --serve (user/serve/serve.c).
LIB_CFLAGS  += $(shell pkg-config --cflags libmicrohttpd 2>/dev/null)
LIB_LDLIBS  += $(shell pkg-config --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd)
CFLAGS      ?= -g -O2

# make sanitize: syncprof, the unit tests, the test programs and fixtures in
# build-san/; syncprof and the unit tests with ASan and UBSan, any error
# fatal.  The test programs stay as users build theirs.
SAN_FLAGS   := -fsanitize=address,undefined -fno-sanitize-recover=all \
               -fno-omit-frame-pointer
ifeq ($(SANITIZE),1)
OUT         := build-san
BIN         := $(OUT)/syncprof
override CFLAGS += $(SAN_FLAGS)
endif
WARN        := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow \
               -Wstrict-prototypes -Wmissing-prototypes
USER_DIRS   := user $(patsubst %/,%,$(sort $(dir $(wildcard user/*/*.c user/*/*/*.c))))
GEN         := $(OUT)/gen
ALL_CFLAGS   = $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -MMD -MP \
               -Ibpf -Iskel -I$(GEN) $(addprefix -I,$(USER_DIRS)) $(LIB_CFLAGS)
# bpf/ is one folder per stage too (docs/design.md); headers resolve by
# name from every folder, as user/'s do.
BPF_DIRS    := bpf $(patsubst %/,%,$(sort $(dir $(wildcard bpf/*/*.c bpf/*/*.h))))
BPF_CFLAGS  := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
               -I$(dir $(VMLINUX)) $(addprefix -I,$(BPF_DIRS)) -MMD -MP

# One .bpf.c per capability, linked by bpftool into one object and one
# skeleton (skel/syncprof.skel.h): the maps in stats.bpf.c exist once, the
# loader loads the programs of the mode it runs.  probecost.bpf.c is make
# bench's own.
BPF_BENCH   := bpf/bench/probecost.bpf.c bpf/bench/recordbench.bpf.c
# --what-if's experiment: a skeleton of its own, loaded only for it.
BPF_APART   := $(BPF_BENCH) bpf/experiment/whatif.bpf.c
# In the order of their names, whatever their folder: the link's order.
BPF_ALL     := $(foreach n,$(sort $(notdir $(wildcard bpf/*.bpf.c bpf/*/*.bpf.c))),\
                 $(wildcard bpf/$(n) bpf/*/$(n)))
BPF_SRCS    := $(filter-out $(BPF_APART),$(BPF_ALL))
BPF_OBJS    := $(patsubst bpf/%.bpf.c,$(BPF_OUT)/%.bpf.o,$(BPF_SRCS) $(BPF_APART))
SKELS       := skel/syncprof.skel.h skel/probecost.skel.h skel/recordbench.skel.h \
               skel/whatif.skel.h

USER_SRCS   := $(wildcard user/*.c user/*/*.c user/*/*/*.c)
# Code protoc-c generates from the .proto files in user/format/ (pprof's
# profile.proto, kept as Google publishes it).
PROTOS      := $(wildcard user/format/*.proto)
GEN_SRCS    := $(patsubst %.proto,$(GEN)/%.pb-c.c,$(notdir $(PROTOS)))
GEN_HDRS    := $(GEN_SRCS:.c=.h)
USER_OBJS   := $(patsubst user/%.c,$(OUT)/user/%.o,$(USER_SRCS)) $(GEN_SRCS:.c=.o)
LIB_OBJS    := $(filter-out $(OUT)/user/main.o,$(USER_OBJS))

# Unit tests: tests/unit/test_<module>.c links user/**/<module>.c and what
# that module needs; none of them needs root or BPF.
UNIT_NAMES  := $(patsubst tests/unit/test_%.c,%,$(wildcard tests/unit/test_*.c))
UNIT_BINS   := $(addprefix $(OUT)/tests/unit/test_,$(UNIT_NAMES))
TARGET_SRCS := $(wildcard tests/targets/*.c)
TARGET_BINS := $(patsubst tests/targets/%.c,$(OUT)/tests/targets/%,$(TARGET_SRCS)) \
               $(OUT)/tests/targets/libsharedlock.so $(OUT)/tests/targets/cxxlock \
               $(OUT)/tests/targets/cxxrt $(OUT)/tests/targets/rustlocks \
               $(OUT)/tests/targets/workload-stripped $(STACK_LIBS) \
               $(OUT)/tests/targets/libdlrace.so
FIXTURES    := $(OUT)/tests/fixtures/libversioned.so

.DELETE_ON_ERROR:
# Kept between runs: a second make must not regenerate and relink.
.SECONDARY: $(BPF_OBJS) $(BPF_OUT)/syncprof.o $(BPF_OUT)/recordbench.o $(SKELS) \
             $(GEN_SRCS) $(GEN_HDRS)
.PHONY: all bench deps deps-build demo readme-samples plan soak test test-loaded test-bins sanitize fuzz fuzz-bins fuzz-seeds clean \
        vmlinux install uninstall

all: $(BIN)

# make deps-build: what make demo needs; make deps: everything make test
# needs.  Root installs them with apt-get (no sudo needed); anyone else is
# told what is missing.
deps: DEPS_WANTED = $(DEB_PKGS) $(if $(shell command -v npm),,npm)
deps-build: DEPS_WANTED = $(DEB_BUILD_PKGS)
deps deps-build:
	$(Q)missing=""; for p in $(DEPS_WANTED); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' \
	    || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "syncprof: missing Debian packages:$$missing (as root: 'make $@', or 'sudo make $@')" >&2; \
	    exit 1; fi; \
	  echo "  DEPS    installing$$missing"; \
	  apt-get update -q >/dev/null && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing >/dev/null; \
	fi
	$(Q)if [ $@ = deps ] && [ ! -x $(NPM_DIR)/node_modules/.bin/speedscope ]; then \
	  echo "  NPM     $(SPEEDSCOPE)"; \
	  npm install --prefix $(NPM_DIR) --no-save --no-audit --no-fund \
	    --loglevel=error $(SPEEDSCOPE) >/dev/null; fi

vmlinux:
	$(call msg,BTF,$(VMLINUX))
	$(Q)mkdir -p $(dir $(VMLINUX))
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX)

$(BPF_OUT)/%.bpf.o: bpf/%.bpf.c $(VMLINUX)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# The files that define shared maps go first (stats, record, unwind, then
# why's with --states' threads, blame's, lock order's and hold's), and
# offcpu.bpf.o and states.bpf.o, which declare contended's and full's task
# storage (bpf/measure/waits.bpf.h), after the files that define them:
# bpftool 7.1's linker gives a map defined after its extern declarations a
# wrong BTF offset.
BPF_MAPS    := $(BPF_OUT)/stats.bpf.o $(BPF_OUT)/record/record.bpf.o \
               $(BPF_OUT)/unwind/unwind.bpf.o
BPF_FIRST   := $(BPF_MAPS) $(addprefix $(BPF_OUT)/measure/,why.bpf.o blame.bpf.o \
               lockorder.bpf.o hold.bpf.o)
BPF_LAST    := $(BPF_OUT)/measure/offcpu.bpf.o $(BPF_OUT)/measure/states.bpf.o
$(BPF_OUT)/syncprof.o: $(BPF_FIRST) $(patsubst bpf/%.bpf.c,$(BPF_OUT)/%.bpf.o,$(BPF_SRCS))
	$(call msg,BPF-LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $(BPF_FIRST) $(filter-out $(BPF_FIRST) $(BPF_LAST),$^) $(BPF_LAST)

skel/syncprof.skel.h: $(BPF_OUT)/syncprof.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name syncprof_bpf > $@

# make bench's producer of waits: the recording's maps, and its program.
$(BPF_OUT)/recordbench.o: $(BPF_MAPS) $(BPF_OUT)/bench/recordbench.bpf.o
	$(call msg,BPF-LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

skel/recordbench.skel.h: $(BPF_OUT)/recordbench.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name recordbench_bpf > $@

skel/whatif.skel.h: $(BPF_OUT)/experiment/whatif.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name whatif_bpf > $@

skel/probecost.skel.h: $(BPF_OUT)/bench/probecost.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name probecost_bpf > $@

$(GEN)/%.pb-c.c $(GEN)/%.pb-c.h: user/format/%.proto
	$(call msg,PROTOC,$@)
	$(Q)mkdir -p $(GEN)
	$(Q)protoc-c --c_out=$(GEN) --proto_path=$(dir $<) $<

# Generated: our warnings are not its author's.
$(GEN)/%.pb-c.o: $(GEN)/%.pb-c.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -I$(GEN) $(LIB_CFLAGS) -c $< -o $@

# Every user object may include a skeleton or a generated header;
# generate them first.
$(OUT)/user/%.o: user/%.c | $(SKELS) $(GEN_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BIN): $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIB_LDLIBS) -o $@

$(OUT)/tests/unit/%.o: tests/unit/%.c | $(SKELS) $(GEN_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUT)/tests/unit/test_%: $(OUT)/tests/unit/test_%.o $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIB_LDLIBS) -lcmocka -o $@

# Target programs are built like users build theirs: -O2 -g, no frame
# pointers, dynamically linked against the system libc.
$(OUT)/tests/targets/%: tests/targets/%.c tests/targets/lib/targetkit.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -g -O2 -Wall -Werror -pthread $< -o $@

# The targets that time their holders share lib/holdkit.c.
HOLDKIT_BINS := $(OUT)/tests/targets/convoy $(OUT)/tests/targets/procs \
                $(OUT)/tests/targets/pshared
$(HOLDKIT_BINS): $(OUT)/tests/targets/%: tests/targets/%.c \
		tests/targets/lib/holdkit.c tests/targets/lib/holdkit.h \
		tests/targets/lib/targetkit.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -g -O2 -Wall -Werror -pthread $< tests/targets/lib/holdkit.c \
		-o $@

$(OUT)/tests/targets/libsharedlock.so: tests/targets/lib/sharedlock.c tests/targets/lib/sharedlock.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -g -O2 -Wall -Werror -fPIC -shared -pthread $< -o $@

$(OUT)/tests/targets/cxxlock: tests/targets/cxxlock.cpp $(OUT)/tests/targets/libsharedlock.so
	$(call msg,CXX,$@)
	$(Q)$(CXX) -g -O2 -Wall -Werror -pthread -Itests/targets $< \
		-L$(OUT)/tests/targets -lsharedlock -Wl,-rpath,'$$ORIGIN' -o $@

# Runtimes' own locks, built as their users build: GLib through
# pkg-config, C++20's library, Debian's rustc (std linked in).
$(OUT)/tests/targets/glocks: tests/targets/glocks.c tests/targets/lib/targetkit.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -g -O2 -Wall -Werror -pthread $(shell pkg-config --cflags glib-2.0 2>/dev/null) \
		$< $(shell pkg-config --libs glib-2.0 2>/dev/null || echo -lglib-2.0) -o $@

$(OUT)/tests/targets/cxxrt: tests/targets/cxxrt.cpp tests/targets/lib/targetkit.h
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CXX) -std=c++20 -g -O2 -Wall -Werror -pthread -Itests/targets $< -o $@

$(OUT)/tests/targets/rustlocks: tests/targets/rustlocks.rs
	$(call msg,RUSTC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(RUSTC) -O -g --edition 2021 $< -o $@

# The stack tests' libraries (tests/targets/lib/stacklibs.h): a wrapper
# without frame pointers, a library with frame pointers and no unwind
# tables at all, and one the target dlopens.
STACK_LIBS  := $(OUT)/tests/targets/libstackwrap.so $(OUT)/tests/targets/libstackfp.so \
               $(OUT)/tests/targets/libstackdl.so
STACKLIB_wrap := -fomit-frame-pointer
STACKLIB_fp   := -fno-omit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables
STACKLIB_dl   := -fomit-frame-pointer

$(OUT)/tests/targets/libstack%.so: tests/targets/lib/stack%.c tests/targets/lib/stacklibs.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -g -O2 -Wall -Werror -fPIC -shared -pthread $(STACKLIB_$*) $< -o $@

# -g without unwind tables leaves the CFI in .debug_frame: dropped, so
# only frame pointers remain (the line tables stay, for names).
$(OUT)/tests/targets/libstackfp.so: tests/targets/lib/stackfp.c tests/targets/lib/stacklibs.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -g -O2 -Wall -Werror -fPIC -shared -pthread $(STACKLIB_fp) $< -o $@
	$(Q)objcopy --remove-section=.debug_frame $@

$(OUT)/tests/targets/stacks: tests/targets/stacks.c tests/targets/lib/targetkit.h \
		tests/targets/lib/stacklibs.h $(STACK_LIBS)
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O2 -Wall -Werror -pthread $< -L$(OUT)/tests/targets \
		-lstackwrap -lstackfp -ldl -Wl,-rpath,'$$ORIGIN' -o $@

# The dlopen race's library: waited through the moment it is loaded.
$(OUT)/tests/targets/libdlrace.so: tests/targets/lib/dlrace.c tests/targets/lib/dlrace.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -g -O2 -Wall -Werror -fPIC -shared -pthread $< -o $@

$(OUT)/tests/targets/dlrace: tests/targets/dlrace.c tests/targets/lib/targetkit.h \
		$(OUT)/tests/targets/libdlrace.so
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O2 -Wall -Werror -pthread $< -ldl -o $@

# What users ship: no .symtab, no DWARF.
$(OUT)/tests/targets/workload-stripped: $(OUT)/tests/targets/workload
	$(call msg,STRIP,$@)
	$(Q)strip --strip-all -o $@ $<

$(OUT)/tests/targets/static_spin: tests/targets/static_spin.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -Wall -Werror -pthread -static $< -o $@

$(OUT)/tests/fixtures/libversioned.so: tests/fixtures/versioned.c tests/fixtures/versioned.map
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -g -O2 -fPIC -shared -Wl,--version-script=tests/fixtures/versioned.map $< -o $@

# --- symbolizer fixtures: begin
# Programs whose call sites and locks tests/unit/test_symbolizer.c names:
# built -g -O2 without frame pointers as users build, linked against
# libcallsites.so next to them ($ORIGIN).  One source, several builds:
#   callsites            the distribution's default (PIE on Debian)
#   callsites-pie        -fPIE -pie
#   callsites-nopie      -fno-pie -no-pie
#   callsites-nodebug    strip --strip-debug: .symtab, no DWARF
#   callsites-stripped   strip --strip-all: no .symtab, no DWARF
#   callsites-debuglink  DWARF in callsites-debuglink.debug, by .gnu_debuglink
#   callsites-buildid    DWARF in symdebug/.build-id/xx/yyyy.debug only, found
#                        when symdebug/ is the debuginfo path
#   members, members-nodebug  locks inside structs, arrays and unions
#                        (tests/fixtures/members.c), named by member path
#                        with DWARF, as symbol+0xoff without (test_memberpath.c)
# and Rust's two manglings (tests/fixtures/rustsites.rs), with Debian's rustc:
#   rustsites-legacy     _ZN...17h<hash>E (rustc 1.63's default), .symtab only
#   rustsites-v0         _R..., with DWARF
SYMFIX        := $(OUT)/tests/fixtures
SYMFIX_WARN   := -Wall -Wextra -Werror -Wshadow
SYMFIX_CFLAGS := -g -O2 -fomit-frame-pointer -pthread $(SYMFIX_WARN) \
                 -Wstrict-prototypes -Wmissing-prototypes
SYMFIX_LINK   := -L$(SYMFIX) -lcallsites -Wl,-rpath,'$$ORIGIN' -ldl
SYMFIX_CXX    := $(or $(CXX),g++)
FIXTURES      += $(SYMFIX)/libcallsites.so $(SYMFIX)/callsites \
                 $(SYMFIX)/callsites-pie $(SYMFIX)/callsites-nopie \
                 $(SYMFIX)/callsites-nodebug $(SYMFIX)/callsites-stripped \
                 $(SYMFIX)/callsites-debuglink $(SYMFIX)/callsites-buildid \
                 $(SYMFIX)/cxxsites $(SYMFIX)/rustsites-legacy $(SYMFIX)/rustsites-v0 \
                 $(SYMFIX)/members $(SYMFIX)/members-nodebug

$(SYMFIX)/libcallsites.so: tests/fixtures/callsites_lib.c tests/fixtures/callsites_lib.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(SYMFIX_CFLAGS) -fPIC -shared $< -o $@

CALLSITES_DEPS := tests/fixtures/callsites.c tests/fixtures/callsites_lib.h \
                  $(SYMFIX)/libcallsites.so

$(SYMFIX)/callsites: $(CALLSITES_DEPS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(SYMFIX_CFLAGS) '-DVARIANT="default"' $< $(SYMFIX_LINK) -o $@

$(SYMFIX)/callsites-pie: $(CALLSITES_DEPS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(SYMFIX_CFLAGS) -fPIE -pie '-DVARIANT="pie"' $< $(SYMFIX_LINK) -o $@

$(SYMFIX)/callsites-nopie: $(CALLSITES_DEPS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(SYMFIX_CFLAGS) -fno-pie -no-pie '-DVARIANT="nopie"' $< $(SYMFIX_LINK) -o $@

$(SYMFIX)/callsites-nodebug: $(SYMFIX)/callsites
	$(call msg,STRIP,$@)
	$(Q)strip --strip-debug -o $@ $<

$(SYMFIX)/callsites-stripped: $(SYMFIX)/callsites
	$(call msg,STRIP,$@)
	$(Q)strip --strip-all -o $@ $<

# The debug file is a target of its own: make fuzz copies it as a seed.
$(SYMFIX)/callsites-debuglink.debug: $(SYMFIX)/callsites
	$(call msg,OBJCOPY,$@)
	$(Q)objcopy --only-keep-debug $< $@

$(SYMFIX)/callsites-debuglink: $(SYMFIX)/callsites $(SYMFIX)/callsites-debuglink.debug
	$(call msg,STRIP,$@)
	$(Q)strip --strip-debug -o $@ $<
	$(Q)objcopy --add-gnu-debuglink=$@.debug $@

# Its own VARIANT string makes its build ID its own.
$(SYMFIX)/callsites-buildid: $(CALLSITES_DEPS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(SYMFIX_CFLAGS) -Wl,--build-id=sha1 '-DVARIANT="buildid"' $< \
		$(SYMFIX_LINK) -o $@.full
	$(Q)id=$$(readelf -n $@.full | sed -n 's/^ *Build ID: *\([0-9a-f]*\).*/\1/p'); \
	  test -n "$$id" || { echo "$@: no build ID" >&2; exit 1; }; \
	  dir=$(SYMFIX)/symdebug/.build-id/$$(echo $$id | cut -c1-2); \
	  rm -rf $(SYMFIX)/symdebug && mkdir -p $$dir && \
	  objcopy --only-keep-debug $@.full $$dir/$$(echo $$id | cut -c3-).debug
	$(Q)strip --strip-debug -o $@ $@.full
	$(Q)rm -f $@.full

$(SYMFIX)/members: tests/fixtures/members.c tests/fixtures/members.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(SYMFIX_CFLAGS) $< -o $@

$(SYMFIX)/members-nodebug: $(SYMFIX)/members
	$(call msg,STRIP,$@)
	$(Q)strip --strip-debug -o $@ $<

$(SYMFIX)/cxxsites: tests/fixtures/cxxsites.cpp
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(SYMFIX_CXX) -g -O2 -fomit-frame-pointer -pthread $(SYMFIX_WARN) \
		-Wmissing-declarations $< -ldl -o $@
RUSTC         ?= /usr/bin/rustc

$(SYMFIX)/rustsites-legacy: tests/fixtures/rustsites.rs
	$(call msg,RUSTC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(RUSTC) -O --crate-name rustsites $< -o $@

$(SYMFIX)/rustsites-v0: tests/fixtures/rustsites.rs
	$(call msg,RUSTC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(RUSTC) -O -g --cfg v0 -C symbol-mangling-version=v0 --crate-name rustsites $< -o $@
# --- symbolizer fixtures: end

# Benchmarks: speed and overhead are measured here, never in timed tests.
$(OUT)/tests/bench/sites.h: tests/bench/gen_sites.sh
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)sh $< 10000 > $@

$(OUT)/tests/bench/bench_symbolizer: tests/bench/bench_symbolizer.c $(OUT)/tests/bench/sites.h $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -O1 -Wno-missing-prototypes -I$(OUT)/tests/bench $< $(LIB_OBJS) \
		$(LIB_LDLIBS) -o $@

$(OUT)/tests/bench/bench_targetfile: tests/bench/bench_targetfile.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(LIB_OBJS) $(LIB_LDLIBS) -o $@

$(OUT)/tests/bench/probecost: tests/bench/probecost.c skel/probecost.skel.h $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(LIB_OBJS) $(LIB_LDLIBS) -o $@

$(OUT)/tests/bench/recordbench: tests/bench/recordbench.c skel/recordbench.skel.h $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(LIB_OBJS) $(LIB_LDLIBS) -o $@

$(OUT)/tests/bench/lockbench: tests/bench/lockbench.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -g -O2 -Wall -Werror -pthread $< -o $@

BENCH_BINS  := $(OUT)/tests/bench/bench_symbolizer $(OUT)/tests/bench/probecost \
               $(OUT)/tests/bench/lockbench $(OUT)/tests/bench/recordbench \
               $(OUT)/tests/bench/bench_targetfile

bench:
	$(Q)$(MAKE) --no-print-directory deps BENCH=1
	$(Q)$(MAKE) --no-print-directory syncprof $(BENCH_BINS) \
		$(OUT)/tests/targets/whatif
	$(Q)$(PYTHON) tests/bench/run.py

# --- unwind fixtures: begin
# Code whose CFI tests/unit/test_cfitable.c checks rule by rule, linked
# into one shared library, libunwind-fixture.so:
#   unwind_frames.c    -O2 -fomit-frame-pointer: a leaf, a 0x88-byte frame
#   unwind_fp.c        -O2 -fno-omit-frame-pointer: an rbp-based CFA
#   unwind_dbgframe.c  -g without unwind tables: CFI in .debug_frame only
#   unwind_asm.c       hand-written CFI in .eh_frame and .debug_frame: exact
#                      rows, and the rules a BPF walker cannot apply
UWFIX          := $(OUT)/tests/fixtures
UWFIX_CFLAGS   := -O2 -fPIC -Wall -Wextra -Werror -Wshadow \
                  -Wstrict-prototypes -Wmissing-prototypes
UWFIX_frames   := -fomit-frame-pointer
UWFIX_fp       := -fno-omit-frame-pointer
UWFIX_dbgframe := -g -fomit-frame-pointer -fno-asynchronous-unwind-tables \
                  -fno-unwind-tables
UWFIX_asm      :=
UWFIX_OBJS     := $(patsubst %,$(UWFIX)/unwind_%.o,frames fp dbgframe asm)
FIXTURES       += $(UWFIX)/libunwind-fixture.so

$(UWFIX)/unwind_%.o: tests/fixtures/unwind_%.c tests/fixtures/unwind_fixture.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(UWFIX_CFLAGS) $(UWFIX_$*) -c $< -o $@

$(UWFIX)/libunwind-fixture.so: $(UWFIX_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) -shared $^ -o $@

# Symbol sizes and bindings for tests/unit/test_modindex.c.
FIXTURES       += $(UWFIX)/symsizes.o
$(UWFIX)/symsizes.o: tests/fixtures/symsizes.S
	$(call msg,AS,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -c $< -o $@

# The frame-pointer fixture again, without unwind tables at all: a module
# the unwinder walks by rbp (tests/unit/test_modtable.c).
FIXTURES       += $(UWFIX)/libunwind-fponly.so
$(UWFIX)/libunwind-fponly.so: tests/fixtures/unwind_fp.c tests/fixtures/unwind_fixture.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(UWFIX_CFLAGS) $(UWFIX_fp) -fno-asynchronous-unwind-tables \
		-fno-unwind-tables -shared $< -o $@

# Public names as glibc spells them, for tests/unit/test_libcmodel.c.
FIXTURES       += $(UWFIX)/libfakelibc.so
$(UWFIX)/libfakelibc.so: tests/fixtures/fakelibc.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(UWFIX_CFLAGS) -fomit-frame-pointer -shared $< -o $@
# --- unwind fixtures: end

# --- fuzzing: begin
# libFuzzer harnesses, tests/fuzz/fuzz_<name>.c, each linked with the
# modules it fuzzes; all of it built by clang with ASan and UBSan in
# build-fuzz/.  `make fuzz` runs each for FUZZ_SECONDS (FUZZ_JOBS at once,
# default one per CPU) from the committed seeds (tests/fuzz/corpus/) and
# copies of the ELF fixtures; what it finds is kept in
# build-fuzz/corpus/<name>/, crashes in build-fuzz/crashes/.
FUZZ_OUT      := build-fuzz
FUZZ_SECONDS  ?= 60
FUZZ_CC       ?= clang
FUZZ_CFLAGS   := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
                 -fno-sanitize-recover=all
FUZZ_NAMES    := procmaps elfimage cfitable modindex symbolizer perfmap replay request
FUZZ_BINS     := $(addprefix $(FUZZ_OUT)/fuzz_,$(FUZZ_NAMES))
FUZZ_MODS_procmaps   := files/procmaps files/linereader files/targetfile array log
FUZZ_MODS_elfimage   := files/elfimage files/targetfile array log
FUZZ_MODS_cfitable   := unwind/cfitable files/targetfile array log
FUZZ_MODS_modindex   := symbols/modindex symbols/modshare array
FUZZ_MODS_symbolizer := symbols/symbolizer symbols/dwflsession symbols/srclines symbols/objectnames \
                        symbols/symcache symbols/procspace symbols/modindex symbols/modshare symbols/memberpath symbols/callarg \
                        symbols/srcpath symbols/holders symbols/perfmap debuginfo/debugfind debuginfo/debugfetch files/elfshare \
                        files/targetfile symbols/demangle symbols/maphistory debuginfo/dwflfile files/procmaps files/linereader \
                        array log
FUZZ_MODS_perfmap    := symbols/perfmap files/targetfile array log
# --serve's requests: libmicrohttpd's parser, then the target's (request.c).
FUZZ_MODS_request    := serve/request
FUZZ_LIBS_request    := -lmicrohttpd
# --replay, whole: the recording's readers and the report path it prints by.
FUZZ_MODS_replay := record/replay record/recmeta record/recnames record/rectext \
                    record/evlog record/chrome format/format report/report \
                    waits/snapshot waits/waitstats report/hist report/columns text/jsonout \
                    text/utf8 text/text target/readiness report/callgraph \
                    format/folded waits/fold format/pprof report/rowstacks \
                    report/whyrows waits/whycharges format/rootsplit report/names report/stateformat \
                    symbols/srcpath outfile options optcheck optvalue locktype log array \
                    waits/offcalls states/threadstates unwind/stacktab \
                    format/formattable format/formatjson format/formatcsv format/formatmeta \
                    findings/findout findings/findings findings/weights findings/threadrun whatif/whatifout \
                    $(FUZZ_MODS_symbolizer)
FUZZ_LIBS_replay := -ljansson -lprotobuf-c
FUZZ_GEN_replay  := $(FUZZ_OUT)/gen/profile.pb-c.o
# ELF seeds made at build time: the fixtures, a few tens of KB each.
FUZZ_ELF_SEEDS := $(addprefix $(FUZZ_OUT)/seeds/elf/,libversioned.so \
                  libunwind-fixture.so libfakelibc.so libcallsites.so \
                  callsites-nopie callsites-debuglink.debug cxxsites unwind_asm.o members)

FUZZ_OBJS     := $(addprefix $(FUZZ_OUT)/user/,$(addsuffix .o,$(sort \
                 $(foreach n,$(FUZZ_NAMES),$(FUZZ_MODS_$(n))))))
.SECONDARY: $(FUZZ_OBJS) $(FUZZ_GEN_replay)

$(FUZZ_OUT)/user/%.o: user/%.c | $(SKELS) $(GEN_HDRS)
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(WARN) -std=gnu11 \
		-D_GNU_SOURCE -MMD -MP -Ibpf -I$(GEN) $(addprefix -I,$(USER_DIRS)) -c $< -o $@

$(FUZZ_OUT)/gen/%.o: $(GEN)/%.c
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -I$(GEN) -c $< -o $@

.SECONDEXPANSION:
$(FUZZ_OUT)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_file.h \
		$$(addprefix $(FUZZ_OUT)/user/,$$(addsuffix .o,$$(FUZZ_MODS_$$*))) \
		$$(FUZZ_GEN_$$*)
	$(call msg,LINK,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(WARN) -std=gnu11 -D_GNU_SOURCE \
		-Ibpf -I$(GEN) $(addprefix -I,$(USER_DIRS)) $(filter %.c %.o,$^) \
		-lbpf -ldw -lelf -lz -liberty $(FUZZ_LIBS_$*) -o $@

$(FUZZ_OUT)/seeds/elf/%: $(OUT)/tests/fixtures/%
	$(Q)mkdir -p $(dir $@)
	$(Q)cp $< $@

fuzz-bins: $(FUZZ_BINS) $(FUZZ_ELF_SEEDS)

fuzz:
	$(Q)$(MAKE) --no-print-directory deps
	$(Q)$(MAKE) --no-print-directory fuzz-bins
	$(Q)tests/fuzz/run.sh $(FUZZ_OUT) $(FUZZ_SECONDS) $(FUZZ_NAMES)

# The small committed ELF seeds, from tests/fuzz/seed.c.
SEED_CFLAGS := -O2 -fPIC -nostdlib -Wl,-z,noseparate-code -Wl,-z,max-page-size=4096 \
               -Wl,--build-id=sha1
fuzz-seeds: tests/fuzz/seed.c tests/fuzz/seed.map
	$(call msg,GEN,tests/fuzz/corpus/elf)
	$(Q)mkdir -p tests/fuzz/corpus/elf
	$(Q)cd tests/fuzz && d=corpus/elf && \
	$(CC) $(SEED_CFLAGS) -g -shared -Wl,--version-script=seed.map seed.c -o $$d/seed.so && \
	strip --strip-debug -o $$d/seed-nodebug.so $$d/seed.so && \
	$(CC) $(SEED_CFLAGS) -g -gz -shared -fno-asynchronous-unwind-tables \
		-fno-unwind-tables -Wl,--version-script=seed.map seed.c -o $$d/seed-debugframe.so && \
	$(CC) $(SEED_CFLAGS) -g -static -no-pie -fno-pic -e seed_leaf seed.c -o $$d/seed-exec && \
	$(CC) -O2 -g -c seed.c -o $$d/seed.o
# --- fuzzing: end

demo:
	$(Q)$(MAKE) --no-print-directory deps-build
	$(Q)$(MAKE) --no-print-directory syncprof $(OUT)/tests/targets/demo
	./syncprof -- $(OUT)/tests/targets/demo 4 5

# README.md's sample outputs, from real runs of the demo (as root).
readme-samples: $(BIN) $(OUT)/tests/targets/demo
	$(Q)$(PYTHON) tests/docs/readme_samples.py --build $(OUT)

test-bins: $(BIN) $(UNIT_BINS) $(TARGET_BINS) $(FIXTURES)

test:
	$(Q)$(MAKE) --no-print-directory deps
	$(Q)$(MAKE) --no-print-directory test-bins
	$(Q)$(PYTHON) tests/tools/includeplan.py --check --quiet user
	$(Q)$(PYTHON) tests/run.py --build $(OUT)

# The plan of user/'s includes, module by module and folder by folder,
# and its circles (make test fails on one).
plan:
	$(Q)$(PYTHON) tests/tools/includeplan.py user

# make test-loaded: what make test runs (the include check, the unit
# tests, every integration module) beside LOADED_HOGS busy loops on the
# machine's CPUs (a shared CI host, a build next door); run by hand (CI
# runs make test, within its 20 minutes).  A test that needs the re-run is named.  LOADED_TESTS
# narrows it to some modules.
LOADED_HOGS  ?= 4
LOADED_TESTS ?= test_*.py
test-loaded:
	$(Q)$(MAKE) --no-print-directory deps
	$(Q)$(MAKE) --no-print-directory test-bins
	$(Q)$(PYTHON) tests/tools/includeplan.py --check --quiet user
	$(Q)$(PYTHON) tests/run.py --build $(OUT) --hogs $(LOADED_HOGS) \
		--pattern '$(LOADED_TESTS)'

# make soak [SOAK_MINUTES=60]: --all --serve for that long beside a
# fork/exec storm, library churn, PostgreSQL under pgbench and Prometheus
# scraping; judges its memory, files, CPU and scrapes (docs/tests.md).
# Not part of make test.
SOAK_MINUTES ?= 60
soak:
	$(Q)$(MAKE) --no-print-directory deps
	$(Q)$(MAKE) --no-print-directory test-bins
	$(Q)$(PYTHON) tests/soak/soak.py --build $(OUT) --minutes $(SOAK_MINUTES)

# make install [PREFIX=/usr/local] [DESTDIR=...]: the binary, its man page,
# its bash completion and syncprof.service (--all --serve on loopback).
PREFIX      ?= /usr/local
BINDIR      := $(PREFIX)/sbin
MAN8DIR     := $(PREFIX)/share/man/man8
COMPDIR     := $(PREFIX)/share/bash-completion/completions
UNITDIR     := $(PREFIX)/lib/systemd/system

install: syncprof
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -D -m 0755 syncprof $(DESTDIR)$(BINDIR)/syncprof
	$(Q)install -D -m 0644 user/syncprof.8 $(DESTDIR)$(MAN8DIR)/syncprof.8
	$(Q)install -D -m 0644 user/syncprof.bash $(DESTDIR)$(COMPDIR)/syncprof
	$(Q)mkdir -p $(DESTDIR)$(UNITDIR)
	$(Q)sed 's|@SBINDIR@|$(BINDIR)|' user/syncprof.service > $(DESTDIR)$(UNITDIR)/syncprof.service

uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(DESTDIR)$(BINDIR)/syncprof $(DESTDIR)$(MAN8DIR)/syncprof.8 \
		$(DESTDIR)$(COMPDIR)/syncprof $(DESTDIR)$(UNITDIR)/syncprof.service

# The same tests against build-san/syncprof and build-san/tests/unit/*.
# A sanitizer's exit status, 99, is none of syncprof's own.
SAN_ENV     := ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:exitcode=99 \
               UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=99
# SANITIZE_TESTS: which integration test files run (all by default).
SANITIZE_TESTS ?= test_*.py
sanitize:
	$(Q)$(MAKE) --no-print-directory deps
	$(Q)$(MAKE) --no-print-directory SANITIZE=1 test-bins
	$(Q)$(SAN_ENV) $(PYTHON) tests/run.py --build build-san --pattern '$(SANITIZE_TESTS)'

clean:
	$(call msg,CLEAN,)
	$(Q)rm -rf build build-san build-fuzz skel/*.skel.h syncprof

-include $(wildcard $(OUT)/user/*.d $(OUT)/user/*/*.d $(OUT)/user/*/*/*.d \
                    $(BPF_OUT)/*.d $(BPF_OUT)/*/*.d $(OUT)/tests/unit/*.d \
                    $(FUZZ_OUT)/user/*.d $(FUZZ_OUT)/user/*/*.d $(FUZZ_OUT)/user/*/*/*.d \
                    $(GEN)/*.d)
