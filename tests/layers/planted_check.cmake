# Run by ctest (layer_check_planted): proves scripts/check-layers.sh fails on a planted upward include and on a
# stale allow entry, on a scratch copy of the tree so the sources are never touched.
#   cmake -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch> -P tests/layers/planted_check.cmake
foreach(var SOURCE_DIR WORK_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "planted_check.cmake needs -D${var}=...")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
foreach(dir include/cerium src kernels scripts)
  if(EXISTS ${SOURCE_DIR}/${dir})
    # Copy the contents of the real folder: copying a symlinked folder as a link would plant into the sources.
    file(REAL_PATH ${SOURCE_DIR}/${dir} real_dir)
    file(COPY ${real_dir}/ DESTINATION ${WORK_DIR}/${dir})
  endif()
endforeach()
foreach(planted include/cerium/ring/rns_basis.hpp scripts/layers.allow)
  if(IS_SYMLINK ${WORK_DIR}/${planted})
    message(FATAL_ERROR "${WORK_DIR}/${planted} is a link; planting into it would edit the sources")
  endif()
endforeach()

# Runs the check on the copy; it must fail and its output must match every regex given.
function(expect_failure case)
  execute_process(COMMAND bash ${WORK_DIR}/scripts/check-layers.sh ${WORK_DIR}
                  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(result EQUAL 0)
    message(FATAL_ERROR "${case}: check-layers.sh passed; it should have failed\n${out}${err}")
  endif()
  foreach(regex ${ARGN})
    if(NOT "${out}${err}" MATCHES "${regex}")
      message(FATAL_ERROR "${case}: output does not match '${regex}'\n${out}${err}")
    endif()
  endforeach()
  message(STATUS "${case}: failed as expected")
endfunction()

# Case 1: ring includes plan. The regexes name the plant, so violations already in the tree cannot pass for it.
set(victim ${WORK_DIR}/include/cerium/ring/rns_basis.hpp)
file(READ ${victim} original)
file(APPEND ${victim} "#include \"cerium/plan/eval.hpp\"\n")
expect_failure("upward include" "include/cerium/ring/rns_basis.hpp:[0-9]+: layer ring includes layer plan")

# Case 2: a stale allow entry (names an include that is no violation), with case 1 undone.
file(WRITE ${victim} "${original}")
file(APPEND ${WORK_DIR}/scripts/layers.allow
     "include/cerium/ring/rns_basis.hpp -> cerium/math/modarith.hpp  # planted: not a violation\n")
expect_failure("stale allow entry" "stale entry in scripts/layers.allow")
