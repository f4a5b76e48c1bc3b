// SPDX-License-Identifier: GPL-2.0
/*
 * demangle: C++ and Rust's two manglings, from symbols the compilers
 * emitted (libstdc++, rustc 1.63's std, legacy and v0); C names and what
 * is not a valid mangling come back unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "demangle.h"

#define UNUSED __attribute__((unused))

static void assert_demangles(const char *mangled, const char *expected)
{
	char *out = demangle__name(mangled);

	assert_non_null(out);
	assert_string_equal(out, expected);
	free(out);
}

static void test_cxx(void **state UNUSED)
{
	assert_demangles("_ZN3app7Counter3addEv", "app::Counter::add()");
	assert_demangles("_ZNK3app7Counter3getEv", "app::Counter::get() const");
	assert_demangles("_ZN3app4bumpIiEEvRT_", "void app::bump<int>(int&)");
	assert_demangles("_ZNSt6thread4joinEv", "std::thread::join()");
}

/* _ZN...17h<16 hex>E: the hash is left out, as rustfilt does. */
static void test_rust_legacy(void **state UNUSED)
{
	assert_demangles(
		"_ZN3std3sys4unix5locks11futex_mutex5Mutex14lock_contended17h2b8e7a1c9f04d3e6E",
		"std::sys::unix::locks::futex_mutex::Mutex::lock_contended");
	assert_demangles("_ZN9rustsites16Guarded$LT$T$GT$4take17he3d1ea46364694dfE",
			 "rustsites::Guarded<T>::take");
	assert_demangles(
		"_ZN90_$LT$std..panicking..begin_panic_handler..PanicPayload$u20$as$u20$core..panic..BoxMeUp$GT$8take_box17h0a6596cbcdb2a8d0E",
		"<std::panicking::begin_panic_handler::PanicPayload as core::panic::BoxMeUp>::take_box");
}

static void test_rust_v0(void **state UNUSED)
{
	assert_demangles("_RNvCsaBFuHmW6wX1_9rustsites10outer_path",
			 "rustsites::outer_path");
	assert_demangles("_RNvMCsaBFuHmW6wX1_9rustsitesINtB2_7GuardedmE4takeB2_",
			 "<rustsites::Guarded<u32>>::take");
	assert_demangles(
		"_RINvNtCs6IL9ONYDOZW_4core3ptr13drop_in_placeINtNtNtCsdyIG5SqMl5y_3std4sync6poison11PoisonErrorINtNtBL_5mutex10MutexGuardmEEECsaBFuHmW6wX1_9rustsites",
		"core::ptr::drop_in_place::<std::sync::poison::PoisonError<std::sync::mutex::MutexGuard<u32>>>");
	/* LLVM's suffix on a local copy is left out. */
	assert_demangles(
		"_RINvNtCs6IL9ONYDOZW_4core3ptr13drop_in_placeNtNtCsihNoVIYWwLU_5alloc6string6StringECsaBFuHmW6wX1_9rustsites.llvm.9216047634832935305",
		"core::ptr::drop_in_place::<alloc::string::String>");
}

static void test_not_mangled(void **state UNUSED)
{
	assert_demangles("main", "main");
	assert_demangles("pthread_mutex_lock", "pthread_mutex_lock");
	assert_demangles("_start", "_start");
	assert_demangles("_Z", "_Z");
	assert_demangles("_RNvC", "_RNvC");
	assert_demangles("_Rust_is_not_mangled", "_Rust_is_not_mangled");
	assert_demangles("", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cxx),
		cmocka_unit_test(test_rust_legacy),
		cmocka_unit_test(test_rust_v0),
		cmocka_unit_test(test_not_mangled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
