/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Shared by the unit and functional tests: TEST_WITH(name, body, ...)
 * defines the cmocka test name that runs a body shared by several tests
 * with its arguments (an endpoint type, a wait object, a progress mode);
 * the test is only a name for those arguments.
 */
#ifndef TEST_WITH_H
#define TEST_WITH_H

#define TEST_WITH(name, body, ...)                                            \
	static void name(void **state)                                        \
	{                                                                     \
		(void)state;                                                  \
		body(__VA_ARGS__);                                            \
	}

#endif /* TEST_WITH_H */
