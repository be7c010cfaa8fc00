/*
 * Test harness for the model.h that `hetlab train` exports (tests/test_train.py builds it).
 *
 * Build: cc -std=c99 -Wall -Werror -O2 -I <dir with model.h> \
 *           -DHETLAB_TREE_FN=hetlab_<cluster>_increase harness.c -o harness
 * Input (stdin): one counter vector per line,
 *     cci_stall_cycles cci_read_requests bus_access cpu_cycles
 * as unsigned 64-bit decimals. Output (stdout): one line per vector, 1 for increase_frequency,
 * 0 for decrease_frequency. The header itself uses no libc; only this harness does (stdio).
 */
#include <inttypes.h>
#include <stdio.h>

#include "model.h"

#ifndef HETLAB_TREE_FN
#error "define HETLAB_TREE_FN as the tree function to test, e.g. -DHETLAB_TREE_FN=hetlab_big_increase"
#endif

int main(void)
{
	uint64_t stall, reads, bus, cycles;

	while (scanf("%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &stall, &reads, &bus, &cycles) == 4)
		printf("%d\n", HETLAB_TREE_FN(stall, reads, bus, cycles));
	return 0;
}
