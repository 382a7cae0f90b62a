// Catch2 2.x needs one translation unit that defines main; 3.x provides Catch2::Catch2WithMain instead.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
