/*
 * Built by tests/test_train.py as a kernel module would build it: -ffreestanding, no libc,
 * -std=c99 -pedantic -Wall -Wextra -Werror -c, and with -m32 where the compiler supports it.
 * The object must have no undefined symbols: in particular no compiler helpers for 64-bit
 * division (__udivdi3 on x86-32, __aeabi_uldivmod on ARM), which kernels do not export.
 */
#include "model.h"

#ifndef HETLAB_TREE_FN
#error "define HETLAB_TREE_FN as the tree function to build, e.g. -DHETLAB_TREE_FN=hetlab_big_increase"
#endif

int hetlab_harness_decide(uint64_t stall, uint64_t reads, uint64_t bus, uint64_t cycles);

int hetlab_harness_decide(uint64_t stall, uint64_t reads, uint64_t bus, uint64_t cycles)
{
	return HETLAB_TREE_FN(stall, reads, bus, cycles);
}
