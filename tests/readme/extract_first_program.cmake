# Run at build time (tests/CMakeLists.txt, target cerium_readme_first_program): writes the README's first ```cpp
# block, as it stands, to a source file, so that the program a new user copies is the program the test compiles.
#   cmake -DREADME=<README.md> -DOUTPUT=<file.cpp> -P tests/readme/extract_first_program.cmake
foreach(var README OUTPUT)
  if(NOT ${var})
    message(FATAL_ERROR "extract_first_program.cmake needs -D${var}=...")
  endif()
endforeach()

file(READ ${README} text)
set(fence_open "```cpp\n")
string(FIND "${text}" "${fence_open}" open)
if(open EQUAL -1)
  message(FATAL_ERROR "${README} has no ```cpp block: the README must open with a complete first program")
endif()
string(LENGTH "${fence_open}" fence_length)
math(EXPR begin "${open} + ${fence_length}")
string(SUBSTRING "${text}" ${begin} -1 rest)
string(FIND "${rest}" "\n```" close)
if(close EQUAL -1)
  message(FATAL_ERROR "${README}: the first ```cpp block is not closed")
endif()
math(EXPR close "${close} + 1")  # keep the block's last newline
string(SUBSTRING "${rest}" 0 ${close} program)

# Rewrite the file only when the block changed, so that an unrelated README edit rebuilds nothing.
set(content "// Extracted from ${README} by tests/readme/extract_first_program.cmake: edit the README, not this file.\n${program}")
set(previous "")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} previous)
endif()
if(NOT previous STREQUAL content)
  file(WRITE ${OUTPUT} "${content}")
endif()
