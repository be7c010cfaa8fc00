/*
 * Compiled by tests/test_train.py with -ffreestanding -nostdinc-like strictness
 * (-std=c99 -pedantic -Wall -Wextra -Werror -c): model.h must build without libc, as in a
 * kernel module, and every tree function must be callable.
 */
#include "model.h"

int hetlab_harness_touch(uint64_t a, uint64_t b, uint64_t c, uint64_t d);

int hetlab_harness_touch(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	return (int)hetlab_fixed_ratio(a, b, 24u) + (int)hetlab_fixed_ratio(c, d, 0u);
}
