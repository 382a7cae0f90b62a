# Every dependency comes from the system (Debian packages or the CUDA Toolkit); nothing is downloaded.
find_package(Threads REQUIRED)
find_package(fmt 9 REQUIRED)
if(CERIUM_BUILD_BENCH)
  find_package(benchmark QUIET)
  if(NOT benchmark_FOUND)
    message(STATUS "Cerium: Google Benchmark not found, benchmarks skipped (apt-get install libbenchmark-dev)")
  endif()
endif()
