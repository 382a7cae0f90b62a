# Run by ctest: installs Cerium to a scratch prefix, then configures, builds and runs a consumer project that
# uses find_package(Cerium CONFIG REQUIRED) and Cerium::cerium. Any failure fails the test.
function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "step failed (${result}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run_step(${CMAKE_COMMAND} --install ${CERIUM_BUILD_DIR} --prefix ${prefix})

# The installed headers are closed: every project header they include is installed too (internal headers, such
# as the CUDA backend's plans and launchers, must not leak into a public one).
file(GLOB_RECURSE installed_headers ${prefix}/include/cerium/*.hpp)
foreach(header ${installed_headers})
  file(STRINGS ${header} include_lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"cerium/")
  foreach(line ${include_lines})
    string(REGEX REPLACE ".*\"(cerium/[^\"]+)\".*" "\\1" included "${line}")
    if(NOT EXISTS ${prefix}/include/${included})
      message(FATAL_ERROR "${header} includes ${included}, which is not installed")
    endif()
  endforeach()
endforeach()
set(cuda_arch_arg "")
if(CUDA_ARCHITECTURES)
  set(cuda_arch_arg -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES})
endif()
run_step(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
         -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release ${cuda_arch_arg})
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step(${WORK_DIR}/build/cerium_consumer)
message(STATUS "installed package consumed and run successfully")
