# The test programs (tests/runtime/ runs them), included by the top
# Makefile: every NAME.c, NAME.cc and rsnames.rs here becomes
# $(OUTPUT)/testprogs/NAME. Built with the flags each test needs of it.
TP_DIR := tests/testprogs
TESTPROGS := $(patsubst $(TP_DIR)/%.c,$(OUTPUT)/testprogs/%,$(wildcard $(TP_DIR)/*.c)) \
	     $(patsubst $(TP_DIR)/%.cc,$(OUTPUT)/testprogs/%,$(wildcard $(TP_DIR)/*.cc))

# The spinner's user stacks must unwind by frame pointers through a leaf
# function; gcc 12 drops the leaf's frame despite -mno-omit-leaf-frame-pointer.
$(OUTPUT)/testprogs/spinner $(OUTPUT)/testprogs/calls: CC := $(CLANG)$(if $(CROSS_COMPILE), --target=$(TRIPLET))
TP_FLAGS := -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
# built as Debian builds its packages: no frame pointers
$(OUTPUT)/testprogs/nofp $(OUTPUT)/testprogs/twopaths $(OUTPUT)/testprogs/thrower: TP_FLAGS := -O2 -g -fomit-frame-pointer
$(OUTPUT)/testprogs/static_nofp: TP_FLAGS := -O2 -g -fomit-frame-pointer -static
$(OUTPUT)/testprogs/%: $(TP_DIR)/%.c | $(OUTPUT)/testprogs
	$(call msg,CC,$@)
	$(Q)$(CC) $(TP_FLAGS) $(WARN) -D_GNU_SOURCE $< -o $@

# two files mapped at one address in turn by remap.c, each its
# function's code at its entry point
REMAP_FLAGS := -O2 -g -fomit-frame-pointer -fPIE -nostdlib -static-pie
$(OUTPUT)/testprogs/remap_a: $(TP_DIR)/remap_lib.c | $(OUTPUT)/testprogs
	$(call msg,CC,$@)
	$(Q)$(CC) $(REMAP_FLAGS) -Wl,-e,remap_spin_a $(WARN) $< -o $@
$(OUTPUT)/testprogs/remap_b: $(TP_DIR)/remap_lib.c | $(OUTPUT)/testprogs
	$(call msg,CC,$@)
	$(Q)$(CC) $(REMAP_FLAGS) -Wl,-e,remap_spin_b -DREMAP_B $(WARN) $< -o $@
$(OUTPUT)/testprogs/remap: $(OUTPUT)/testprogs/remap_a $(OUTPUT)/testprogs/remap_b
TESTPROGS := $(filter-out $(OUTPUT)/testprogs/remap_lib,$(TESTPROGS))

# a C program that opens a C++ library with dlopen; neither has frame
# pointers (as Debian builds)
$(OUTPUT)/testprogs/dlthrower: TP_FLAGS := -O2 -g -fomit-frame-pointer
$(OUTPUT)/testprogs/libdlthrow.so: $(TP_DIR)/dlthrow_lib.cc | $(OUTPUT)/testprogs
	$(call msg,CXX,$@)
	$(Q)$(CXX) -O2 -g -fomit-frame-pointer -fPIC -shared $(WARN) $< -o $@
$(OUTPUT)/testprogs/dlthrower: $(OUTPUT)/testprogs/libdlthrow.so
TESTPROGS := $(filter-out $(OUTPUT)/testprogs/dlthrow_lib,$(TESTPROGS))

# IFUNC resolvers run by the loader's lazy binding (its trampoline's CFA
# is rbx-based); neither file has frame pointers
$(OUTPUT)/testprogs/liblazy.so: $(TP_DIR)/lazy_lib.c | $(OUTPUT)/testprogs
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -fPIC -shared $(WARN) $< -o $@
$(OUTPUT)/testprogs/lazybind: $(TP_DIR)/lazybind.c $(OUTPUT)/testprogs/liblazy.so
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -Wl,-z,lazy $(WARN) $< -o $@ \
		-L$(OUTPUT)/testprogs -Wl,-rpath,'$$ORIGIN' -llazy
TESTPROGS := $(filter-out $(OUTPUT)/testprogs/lazy_lib,$(TESTPROGS))

# looks like another CPython to pmtrace: its symbols in .dynsym
$(OUTPUT)/testprogs/fakepy: TP_FLAGS += -rdynamic

# C++: names to demangle (frame pointers kept: perf -g is the oracle)
$(OUTPUT)/testprogs/%: $(TP_DIR)/%.cc | $(OUTPUT)/testprogs
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(TP_FLAGS) $(WARN) $< -o $@

# Rust: legacy and v0 symbol mangling
# Debian's compiler, which test-deps installs: a newer one first on PATH
# (rustup's) folded the workload until perf saw a handful of samples
RUSTC ?= /usr/bin/rustc
$(OUTPUT)/testprogs/rsnames_legacy: $(TP_DIR)/rsnames.rs | $(OUTPUT)/testprogs
	$(call msg,RUSTC,$@)
	$(Q)$(RUSTC) -O -g -C force-frame-pointers=yes $< -o $@
$(OUTPUT)/testprogs/rsnames_v0: $(TP_DIR)/rsnames.rs | $(OUTPUT)/testprogs
	$(call msg,RUSTC,$@)
	$(Q)$(RUSTC) -O -g -C force-frame-pointers=yes -C symbol-mangling-version=v0 $< -o $@
# (not cross-built: Debian's rustc has no arm64 standard library here)
TESTPROGS += $(if $(CROSS_COMPILE),,$(OUTPUT)/testprogs/rsnames_legacy $(OUTPUT)/testprogs/rsnames_v0)

testprogs: $(TESTPROGS)

$(OUTPUT)/testprogs:
	$(Q)mkdir -p $@
