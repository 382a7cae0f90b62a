# cerium_add_layer(<name> [DEPENDS targets...]): one library per layer of include/cerium/<name>, compiled from
# src/<name>/*.cpp, linked only to the layers below it (scripts/check-layers.sh holds the order). A layer's
# instantiations for the CUDA backend live in src/<name>/cuda/ and are compiled, and cerium_cuda linked, only when
# the CUDA backend is built. A layer with no sources is an INTERFACE (header-only) target.
function(cerium_add_layer name)
  cmake_parse_arguments(ARG "" "" "DEPENDS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${name}/*.cpp)
  file(GLOB_RECURSE cuda_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${name}/cuda/*.cpp)
  # Transports with optional dependencies (src/<layer>/mpi/, src/<layer>/nccl/) get their own targets
  # (cerium_dist_mpi, cerium_dist_nccl).
  list(FILTER sources EXCLUDE REGEX "/src/${name}/(mpi|nccl)/")
  if(cuda_sources)
    if(CERIUM_HAS_CUDA)
      list(APPEND ARG_DEPENDS cerium_cuda)
    else()
      list(REMOVE_ITEM sources ${cuda_sources})
    endif()
  endif()
  set(target cerium_${name})
  if(sources)
    add_library(${target} STATIC ${sources})
    set(scope PUBLIC)
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic>)
  else()
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
  endif()
  add_library(Cerium::${name} ALIAS ${target})
  target_include_directories(${target} ${scope}
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${target} ${scope} cxx_std_20)
  target_link_libraries(${target} ${scope} ${ARG_DEPENDS})
endfunction()
