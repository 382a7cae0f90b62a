#pragma once
// One include for Catch2 2.13 (Debian 12) and 3.x (the GPU machine). Tests use only the macros common to
// both, Catch::Approx and the generators.

#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/generators/catch_generators_range.hpp>
#define CERIUM_CATCH_VERSION 3
#else
#include <catch2/catch.hpp>
#define CERIUM_CATCH_VERSION 2
// 2.x keeps Approx in Catch::Detail; 3.x has Catch::Approx. Tests write Catch::Approx.
namespace Catch {
using Detail::Approx;
}
#endif
