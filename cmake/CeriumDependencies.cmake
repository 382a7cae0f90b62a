# Every dependency comes from the system (Debian packages or the CUDA Toolkit); nothing is downloaded.
find_package(Threads REQUIRED)
find_package(fmt 9 REQUIRED)
find_package(ZLIB REQUIRED)  # gzip-compressed datasets (io/idx.hpp)
# The CPU backend's batched loops (NTT over limbs, basis conversion, rescale) on threads: GCC's own OpenMP
# (libgomp, part of build-essential). A compiler without it (clang without libomp, the sanitizer builds) builds the
# same code single-threaded: the words are the same either way.
option(CERIUM_OPENMP "Run the CPU backend's batched loops on OpenMP threads" ON)
set(CERIUM_HAS_OPENMP OFF)
if(CERIUM_OPENMP)
  find_package(OpenMP COMPONENTS CXX QUIET)
  if(OpenMP_CXX_FOUND)
    set(CERIUM_HAS_OPENMP ON)
  else()
    message(STATUS "Cerium: no OpenMP for this compiler, the CPU backend runs on one thread")
  endif()
endif()
if(CERIUM_BUILD_BENCH)
  find_package(benchmark QUIET)
  if(NOT benchmark_FOUND)
    message(STATUS "Cerium: Google Benchmark not found, benchmarks skipped (apt-get install libbenchmark-dev)")
  endif()
endif()
