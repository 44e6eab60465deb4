# gpubatch - GPU batch tool for reductions, transposes and quadratic roots.
#
# Switches (make VAR=value):
#   V=1        show full commands
#   CC         C compiler (default cc); CFLAGS and LDFLAGS are appended to ours
#   PREFIX     install prefix (default /usr/local); DESTDIR for staged installs;
#              DOCDIR for the documentation (default PREFIX/share/doc/gpubatch);
#              BASHCOMPDIR, ZSHCOMPDIR, FISHCOMPDIR for the shell completions
#              (default PREFIX/share/bash-completion/completions,
#              PREFIX/share/zsh/site-functions, PREFIX/share/fish/vendor_completions.d)
#   STRIP      strip program for `make install-strip` (default strip)
#   NVCC       CUDA compiler, used only by `make ptx` (default nvcc), with its ptxas
#   PTX_JOBS   compilations `make ptx` runs at once (default: the number of cores)
#   PTX_FAMILIES  the image families `make ptx` rebuilds, e.g. "inflate reduce"
#              (default: every one)
#   PTX_OUT    where `make ptx` writes the images (default ptx/images)
#   PTX_WORK   where `make ptx` and `make ptx-unpack` write the PTX text and
#              cubins (default BUILD/ptx)
#   BUILD      build directory (default build)
#   T, CASE    `make test T=NAME`: only the test program NAME (test_reduce,
#              test_npz, fuzz_npy, ...; several, space-separated);
#              CASE=TEXT: only the cases whose names hold TEXT
#   JOBS       test programs `make test` and `make check` run at once
#              (default: the number of cores, at least 2)
#   CI         CI=true: a missing test tool fails the test instead of
#              skipping it
#
# `make` needs only a C compiler, GNU Make and zlib's static library: the
# kernels come from the images committed in ptx/images/ (PTX and native
# code), embedded in the binary.

CC ?= cc
NVCC ?= nvcc
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/gpubatch
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
STRIP ?= strip
# Installed into DOCDIR, keeping their relative links: the front page, the
# measurements, the security notes and the reference in docs/.
DOC_FILES := README.md BENCHMARKS.md SECURITY.md LICENSE
DOC_REF := $(sort $(wildcard docs/*.md))
DOC_IMG := $(sort $(wildcard docs/img/*.svg))
BUILD ?= build
VERSION := 0.1.0

ifeq ($(V),1)
Q :=
else
Q := @
endif

# Strict IEEE arithmetic: no contraction into FMA, no fast-math; the CPU
# backend must give the GPU's bits.
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Wshadow -Wno-unused-parameter \
	-ffp-contract=off -fno-fast-math -fno-strict-aliasing -pthread -I. \
	-DGPUBATCH_VERSION='"$(VERSION)"'
ALL_CFLAGS := $(BASE_CFLAGS) $(SAN_FLAGS) $(CFLAGS)
LDLIBS_ALL := -l:libz.a -ldl -lm -pthread

# NVCC flags for the PTX: IEEE division and square root, no
# contraction, no flush-to-zero.
NVCC_FLAGS := -std=c++17 -fmad=false -prec-div=true -prec-sqrt=true -ftz=false -O3 -I.
# Virtual architectures per kernel family: compute_75 runs on every GPU CUDA 13
# supports; add 90 for a family only when a Hopper-specific variant pays.
REDUCE_ARCHS := 75
AXIS_ARCHS := 75
QUADRATIC_ARCHS := 75
TRANSPOSE_ARCHS := 75
INFLATE_ARCHS := 75
DEFLATE_ARCHS := 75
# The article ladders `gpubatch bench` times beside the production kernels.
LADDER_ARCHS := 75
LADDER_MODULES := ladder_reduce ladder_transpose ladder_quadratic
# Native code (SASS) for these compute capabilities beside the PTX: the
# driver runs it with no JIT on GPUs of the same major version and a minor
# version at least as high.
SASS_ARCHS := 75 80 86 89 90 100 120
PTX_OUT ?= ptx/images
PTX_FAMILIES ?=
empty :=
space := $(empty) $(empty)
PTX_WORK ?= $(BUILD)/ptx
PTX_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
PTX_DTYPES := f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 bool
QUADRATIC_DTYPES := f32 f64 f16 bf16
REDUCE_KERNELS := moments moments_sq extrema var
REDUCE_FLOAT_KERNELS := moments_skipnan moments_sq_skipnan extrema_skipnan var_skipnan

LIB_SRC := $(wildcard runtime/*.c runtime/gzip/*.c runtime/tools/*.c io/*.c io/gzip/*.c) \
	$(filter-out cli/main.c,$(wildcard cli/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/ptx_table.o
IMAGES := $(sort $(wildcard ptx/images/*.img))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
# The quadratic accuracy tests need MPFR's headers (libmpfr-dev); without them
# that one test program is left out, and `make test` says so.
HAVE_MPFR := $(shell printf '\043include <mpfr.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
ifneq ($(HAVE_MPFR),1)
UNIT_SRC := $(filter-out tests/unit/test_quadratic.c,$(UNIT_SRC))
endif
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_TIME ?= 60

.PHONY: all ptx ptx-unpack deps test test-run check tests install uninstall clean help asan ubsan san tsan fuzz
.DEFAULT_GOAL := all

## all: build ./gpubatch (no nvcc needed)
all: gpubatch

gpubatch: $(BUILD)/cli/main.o $(LIB_OBJ)
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)

# Each object depends on the headers it includes: the compiler lists them
# in BUILD/*.d (-MMD), each header also a target of its own (-MP) so that a
# header removed does not stop the build; after a fresh clone there are no
# lists yet and every object is built anyway.
$(BUILD)/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# The embedded images: one table entry per module's PTX or cubin in
# ptx/images/*.img, each pointing at its zlib stream inside the image.
$(BUILD)/ptx_table.c: $(IMAGES) ptx/embed.sh Makefile
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	$(Q)sh ptx/embed.sh $(IMAGES) > $@.tmp && mv $@.tmp $@

$(BUILD)/ptx_table.o: $(BUILD)/ptx_table.c $(IMAGES)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# `make ptx`, in three steps, run on PTX_JOBS cores: nvcc writes each
# module's PTX to PTX_WORK; every PTX file gets the lowest PTX ISA version
# (7.0 at the least) that ptxas assembles for each GPU nvcc lists at or above
# its target (ptx/lower_version.sh), so that it loads on the oldest drivers
# that can, and ptxas's native code (a cubin) of that PTX for each of
# SASS_ARCHS is kept beside it; then ptx/image.c packs each family's PTX and
# cubins into PTX_OUT/FAMILY.img (the family: the module's name up to its
# first `_`), and ptx/sources.sh records what they were made from in
# PTX_OUT/SOURCES (a full build only: with PTX_FAMILIES the record is left
# as it was, so that the test of the images rebuilds them all).
## ptx: regenerate ptx/images/*.img from ptx/*.cu (needs nvcc; commit the result; PTX_OUT=dir elsewhere)
ptx: $(BUILD)/ptx-image
	$(Q)rm -rf $(PTX_WORK) && mkdir -p $(PTX_WORK) $(PTX_OUT)
	$(Q){ for a in $(REDUCE_ARCHS); do for d in $(PTX_DTYPES); do \
	    ks="$(REDUCE_KERNELS)"; case $$d in f*|bf*) ks="$$ks $(REDUCE_FLOAT_KERNELS)";; esac; \
	    for k in $$ks; do echo "reduce_$${d}_$$k $$a reduce -DGB_DT_$$d -DRD_KERNEL_$$k"; done; \
	  done; done; \
	  for a in $(AXIS_ARCHS); do for d in $(PTX_DTYPES); do echo "axis_$$d $$a axis -DGB_DT_$$d"; done; done; \
	  for a in $(QUADRATIC_ARCHS); do for d in $(QUADRATIC_DTYPES); do echo "quadratic_$$d $$a quadratic -DGB_DT_$$d"; done; done; \
	  for a in $(TRANSPOSE_ARCHS); do echo "transpose $$a transpose"; done; \
	  for a in $(INFLATE_ARCHS); do echo "inflate $$a inflate"; done; \
	  for a in $(DEFLATE_ARCHS); do echo "deflate $$a deflate"; done; \
	  for a in $(LADDER_ARCHS); do for m in $(LADDER_MODULES); do echo "$$m $$a $$m"; done; done; \
	} | { if [ -n "$(PTX_FAMILIES)" ]; then grep -E "^($(subst $(space),|,$(strip $(PTX_FAMILIES))))[_ ]"; else cat; fi; } \
	  | NVCC_CMD="$(NVCC) $(NVCC_FLAGS)" W="$(PTX_WORK)" xargs -L 1 -P $(PTX_JOBS) sh -c \
	  'm=$$1 a=$$2 src=ptx/$$3.cu; shift 3; echo "  NVCC    $$W/$$m.compute_$$a.ptx"; \
	   $$NVCC_CMD -arch=compute_$$a "$$@" -ptx -o "$$W/$$m.compute_$$a.ptx" "$$src"' sh
	$(Q)ptxas=$$(dirname "$$(command -v $(NVCC))")/ptxas; \
	  targets=$$($(NVCC) --list-gpu-arch | sed -n 's/^compute_\([0-9]*\)$$/\1/p' | sort -n | tr '\n' ' '); \
	  ls $(PTX_WORK)/*.ptx | xargs -n 1 -P $(PTX_JOBS) env PTXAS="$$ptxas" PTX_TARGETS="$$targets" \
	    SASS_ARCHS="$(SASS_ARCHS)" sh ptx/lower_version.sh
	$(Q)[ -n "$(PTX_FAMILIES)" ] || rm -f $(PTX_OUT)/*.img
	$(Q)export LC_ALL=C; cd $(PTX_WORK) && for fam in $$(ls *.ptx | sed 's/[._].*//' | sort -u); do \
	  files=; for m in $$(ls *.ptx | sed 's/\..*//' | grep -E "^$$fam(_|$$)" | sort -u); do \
	    files="$$files $$(ls $$m.compute_*.ptx | sort -t. -k2.9n)"; \
	    for a in $(SASS_ARCHS); do [ ! -f $$m.sm_$$a.cubin ] || files="$$files $$m.sm_$$a.cubin"; done; \
	  done; \
	  echo "  IMAGE   $(PTX_OUT)/$$fam.img"; rm -f $(abspath $(PTX_OUT))/$$fam.img; \
	  $(abspath $(BUILD))/ptx-image pack $(abspath $(PTX_OUT))/$$fam.img $$files || exit 1; \
	done
	$(Q)[ -n "$(PTX_FAMILIES)" ] || sh ptx/sources.sh > $(PTX_OUT)/SOURCES

# The packer and unpacker of the images, a host program.
$(BUILD)/ptx-image: ptx/image.c ptx/cubin.h Makefile
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< -l:libz.a

## ptx-unpack: write the PTX text and cubins of ptx/images/*.img to PTX_WORK (default build/ptx; no nvcc needed)
ptx-unpack: $(BUILD)/ptx-image
	$(Q)mkdir -p $(PTX_WORK) && for f in $(IMAGES); do $(BUILD)/ptx-image unpack $$f $(PTX_WORK) || exit 1; done

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJ) tests/unit/check.h tests/unit/bytes.h \
		tests/pipeline_gz_run.h tests/zlib_raw.h tests/inflate_stream_host.h tests/gzs_standin.h
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -MMD -MP -MF $@.d -o $@ $< $(TEST_OBJ) $(LDLIBS_ALL) $(TEST_LIBS)
TEST_OBJ = $(LIB_OBJ)

# test_gzstream and test_run bring their own stand-in for the device's inflate
# kernels (tests/gzs_standin.h).
$(BUILD)/tests/test_gzstream $(BUILD)/tests/test_run: \
	TEST_OBJ = $(filter-out $(BUILD)/runtime/gzip/stream_inflate.o,$(LIB_OBJ))

# The quadratic tests check roots against MPFR (libmpfr-dev).
$(BUILD)/tests/test_quadratic: TEST_LIBS = -lmpfr -lgmp

# Fuzz harnesses linked with a replay driver: `make test` runs the corpus.
$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/replay_main.c $(LIB_OBJ) tests/pipeline_gz_run.h \
		tests/zlib_raw.h
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -MMD -MP -MF $@.d -o $@ tests/fuzz/replay_main.c $< $(LIB_OBJ) $(LDLIBS_ALL)

# A stand-in driver library for the tests of the GPU error paths.
$(BUILD)/tests/libfakecuda.so: tests/cli/fakecuda.c runtime/cu.h ptx/cubin.h
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) -shared -fPIC -o $@ $<

## fuzz: run each libFuzzer harness for FUZZ_TIME seconds (needs clang)
fuzz: $(BUILD)/ptx_table.c
	$(Q)for h in $(FUZZ_SRC); do n=$${h#tests/fuzz/fuzz_}; n=$${n%.c}; \
	  clang -std=c11 -D_GNU_SOURCE -DGPUBATCH_VERSION='"$(VERSION)"' -g -O1 -I. -fsanitize=fuzzer,address,undefined \
	    -o $(BUILD)/libfuzzer_$$n $$h $(LIB_SRC) $(BUILD)/ptx_table.c -l:libz.a -ldl -lm -pthread || exit 1; \
	  mkdir -p $(BUILD)/fuzz-new-$$n; \
	  d=; [ -f tests/fuzz/$$n.dict ] && d=-dict=tests/fuzz/$$n.dict; \
	  $(BUILD)/libfuzzer_$$n -max_total_time=$(FUZZ_TIME) -artifact_prefix=$(BUILD)/ $$d \
	    $(BUILD)/fuzz-new-$$n tests/fuzz/corpus/$$n || exit 1; \
	done

## tests: build the unit test programs and fuzz replayers
tests: $(UNIT_BIN) $(FUZZ_BIN) $(BUILD)/tests/libfakecuda.so

## deps: install the build's and the tests' dependencies (Debian, as root; else says what to install)
deps:
	$(Q)sh tests/deps.sh

# `make test` builds and runs in a sub-make, so that `make deps test` sees
# what deps installed (MPFR's headers decide whether test_quadratic is
# built), and nothing of the test is built before deps is done.
## test: run unit and command-line tests (GPU tests too when a GPU is usable); T=NAME runs one test program, CASE=TEXT the cases of that name (docs/testing.md)
test: $(if $(filter deps,$(MAKECMDGOALS)),| deps)
	$(Q)$(MAKE) --no-print-directory test-run

test-run: gpubatch $(UNIT_BIN) $(FUZZ_BIN) $(BUILD)/tests/libfakecuda.so
	$(Q)[ "$(HAVE_MPFR)" = 1 ] || echo "note: no MPFR headers (libmpfr-dev; make deps): test_quadratic not built"
	$(Q)BUILD=$(BUILD) GPUBATCH_TEST_CASE="$(CASE)" GPUBATCH_TEST_NO_MPFR=$(if $(filter 1,$(HAVE_MPFR)),,1) \
	  $(if $(JOBS),GPUBATCH_TEST_JOBS=$(JOBS)) sh tests/run.sh $(T)

# The fast tier for the edit loop (make check): the unit test programs and
# fuzz replays (seconds each) but the three longest codec sweeps (a deflate
# stream's segments, the reader's pause points, a member's device batches),
# and the command-line tests of each command's main paths, errors and
# output formats, with GPUBATCH_TEST_QUICK's shorter lists; the long sweeps
# (those three, every instruction-set variant, shards, documents, driver
# faults, hostile and damaged inputs, valgrind) are left to make test.
CHECK_SLOW := test_inflate_stream test_reader test_gzstream
CHECK_TESTS := $(addprefix unit/,$(filter-out $(CHECK_SLOW),$(notdir $(UNIT_BIN)))) \
	$(addprefix fuzz_,$(patsubst tests/fuzz/corpus/%,%,$(wildcard tests/fuzz/corpus/*))) \
	cli/test_reduce.sh cli/test_quadratic.sh cli/test_transpose.sh cli/test_guards.sh \
	cli/test_format.sh cli/test_gzip_out.sh cli/test_npz_out.sh cli/test_progress.sh \
	cli/test_faults.sh cli/test_driver_versions.sh
## check: the fast tier for the edit loop (under 2 minutes on 2 cores): unit tests, fuzz replays and the main command-line tests, shorter lists; T=NAME as for test
check:
	$(Q)GPUBATCH_TEST_QUICK=1 $(MAKE) --no-print-directory test-run T="$(if $(T),$(T),$(CHECK_TESTS))"

# The sanitizer runs link their own ./gpubatch (the command-line tests run
# that path); it is removed before and after, so that neither a plain nor a
# sanitized binary is mistaken for the other.
## soak: run the test suite with the full products of the longest command-line loops (shard counts by every dtype and size, spread by make test over its rounds) and twice the damaged gzip copies
.PHONY: soak
soak:
	$(Q)GPUBATCH_TEST_SOAK=1 $(MAKE) --no-print-directory test

## asan: run the test suite under AddressSanitizer
asan:
	$(Q)rm -f gpubatch; $(MAKE) --no-print-directory BUILD=build/asan SAN_FLAGS="-fsanitize=address -fno-omit-frame-pointer" test; \
	  st=$$?; rm -f gpubatch; exit $$st

## san: run the test suite under AddressSanitizer and UndefinedBehaviorSanitizer in one build (what CI runs), with shorter lists in the longest command-line tests and the PTX images not made again
san:
	$(Q)rm -f gpubatch; GPUBATCH_TEST_QUICK=1 $(MAKE) --no-print-directory BUILD=build/san \
	  SAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" test; \
	  st=$$?; rm -f gpubatch; exit $$st

# test_run is left out of tsan: its hand-over cases time a stand-in
# driver's start against the host's decode, which ThreadSanitizer slows
# past what they allow, and each free of the stand-in device's memory (a
# calloc of gigabytes) costs ThreadSanitizer seconds, its runs many minutes.
TSAN_TESTS := $(addprefix unit/,$(filter-out test_run,$(notdir $(UNIT_BIN))))
## tsan: run the unit tests but test_run under ThreadSanitizer (the threads of the decoders, the readers, the pipeline and the pool)
tsan:
	$(Q)rm -f gpubatch; $(MAKE) --no-print-directory BUILD=build/tsan SAN_FLAGS="-fsanitize=thread" \
	  test-run T="$(TSAN_TESTS)"; st=$$?; rm -f gpubatch; exit $$st

## ubsan: run the test suite under UndefinedBehaviorSanitizer
ubsan:
	$(Q)rm -f gpubatch; $(MAKE) --no-print-directory BUILD=build/ubsan SAN_FLAGS="-fsanitize=undefined -fno-sanitize-recover=all" test; \
	  st=$$?; rm -f gpubatch; exit $$st

# Every directory install puts files in; those it has to make are listed in
# DOCDIR/installed-dirs, so that uninstall removes them (and only them, and
# only when empty) again.
INSTALL_DIRS = $(BINDIR) $(MANDIR)/man1 $(BASHCOMPDIR) $(ZSHCOMPDIR) $(FISHCOMPDIR) \
	$(DOCDIR)/docs/img
INSTALLED = $(BINDIR)/gpubatch $(MANDIR)/man1/gpubatch.1 $(BASHCOMPDIR)/gpubatch \
	$(ZSHCOMPDIR)/_gpubatch $(FISHCOMPDIR)/gpubatch.fish \
	$(addprefix $(DOCDIR)/,$(DOC_FILES) $(DOC_REF) $(DOC_IMG))

## install: install the binary, man page, bash, zsh and fish completions and documentation (DOCDIR) under $(DESTDIR)$(PREFIX)
install: gpubatch
	$(Q)made=; for d in $(INSTALL_DIRS); do \
	  while [ ! -d "$(DESTDIR)$$d" ] && ! printf '%s\n' $$made | grep -qx -- "$$d"; do \
	    made="$$made $$d"; d=$$(dirname "$$d"); \
	  done; \
	done; \
	install -d $(addprefix $(DESTDIR),$(INSTALL_DIRS)) && \
	if [ -n "$$made" ]; then printf '%s\n' $$made | LC_ALL=C sort -r > "$(DESTDIR)$(DOCDIR)/installed-dirs"; \
	else : > "$(DESTDIR)$(DOCDIR)/installed-dirs"; fi
	install -m 755 $(INSTALL_STRIP) gpubatch $(DESTDIR)$(BINDIR)/gpubatch
	install -m 644 gpubatch.1 $(DESTDIR)$(MANDIR)/man1/gpubatch.1
	install -m 644 cli/gpubatch.bash $(DESTDIR)$(BASHCOMPDIR)/gpubatch
	sed 's|^local script=.*|local script=$(BASHCOMPDIR)/gpubatch|' cli/gpubatch.zsh > $(DESTDIR)$(ZSHCOMPDIR)/_gpubatch
	sed 's|^set -g __gpubatch_bash_completion .*|set -g __gpubatch_bash_completion $(BASHCOMPDIR)/gpubatch|' \
	  cli/gpubatch.fish > $(DESTDIR)$(FISHCOMPDIR)/gpubatch.fish
	chmod 644 $(DESTDIR)$(ZSHCOMPDIR)/_gpubatch $(DESTDIR)$(FISHCOMPDIR)/gpubatch.fish
	install -m 644 $(DOC_FILES) $(DESTDIR)$(DOCDIR)
	install -m 644 $(DOC_REF) $(DESTDIR)$(DOCDIR)/docs
	install -m 644 $(DOC_IMG) $(DESTDIR)$(DOCDIR)/docs/img

## install-strip: install, with the binary stripped of its symbols (STRIP)
.PHONY: install-strip
install-strip:
	$(Q)$(MAKE) --no-print-directory install INSTALL_STRIP="-s --strip-program=$(STRIP)"

## uninstall: remove what install installed, and the directories it made when they are empty
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	$(Q)list="$(DESTDIR)$(DOCDIR)/installed-dirs"; \
	if [ -f "$$list" ]; then dirs=$$(cat "$$list"); else dirs="$(DOCDIR)/docs/img $(DOCDIR)/docs $(DOCDIR)"; fi; \
	rm -f "$$list"; \
	for d in $$dirs; do [ ! -d "$(DESTDIR)$$d" ] || rmdir "$(DESTDIR)$$d" 2>/dev/null || true; done

## dist: make gpubatch-$(VERSION).tar.gz from `git ls-files` (with the committed images: builds without nvcc)
.PHONY: dist
dist:
	$(Q)mkdir -p $(BUILD)
	$(Q)git ls-files -z > $(BUILD)/dist-files
	@echo "  TAR     gpubatch-$(VERSION).tar.gz"
	$(Q)tar --null -T $(BUILD)/dist-files --transform 'flags=r;s,^,gpubatch-$(VERSION)/,' \
	  --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$$(git log -1 --format=%ct) \
	  -cf $(BUILD)/dist.tar
	$(Q)gzip -9n < $(BUILD)/dist.tar > gpubatch-$(VERSION).tar.gz.tmp
	$(Q)mv gpubatch-$(VERSION).tar.gz.tmp gpubatch-$(VERSION).tar.gz
	$(Q)rm -f $(BUILD)/dist.tar $(BUILD)/dist-files

-include $(wildcard $(BUILD)/*/*.d $(BUILD)/*/*/*.d)

## clean: remove build outputs (never the committed images)
clean:
	rm -rf $(BUILD) build gpubatch

## help: list the targets
help:
	@sed -n 's/^## //p' Makefile
