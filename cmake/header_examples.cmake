# refenc_header_examples(<target> PRELUDE <file> HEADERS <header>... [LIBS <lib>...])
#
# An object library that compiles the usage examples in the opening comments of HEADERS (extracted
# by scripts/header_examples.sh, regenerated whenever a header changes), so that an example that no
# longer matches the code breaks the build. PRELUDE declares the names the examples use without
# declaring them. LIBS give the include directories (and flags) the headers need. One call per layer.
# Sanitizer builds skip them: examples that never run give a sanitizer nothing to check.
function(refenc_header_examples target)
  if(REFENC_SANITIZE)
    return()
  endif()
  cmake_parse_arguments(ARG "" "PRELUDE" "HEADERS;LIBS" ${ARGN})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}.cpp")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND sh "${PROJECT_SOURCE_DIR}/scripts/header_examples.sh" "${out}" "${ARG_PRELUDE}" ${ARG_HEADERS}
    DEPENDS "${PROJECT_SOURCE_DIR}/scripts/header_examples.sh" "${ARG_PRELUDE}" ${ARG_HEADERS}
    COMMENT "Extracting the header examples of ${target}"
    VERBATIM)
  add_library(${target} OBJECT "${out}")
  target_link_libraries(${target} PRIVATE ${ARG_LIBS})
  # Examples show values without using them.
  target_compile_options(${target} PRIVATE -Wno-unused-value -Wno-unused-variable
                         -Wno-unused-but-set-variable -Wno-unused-result -Wno-unused-local-typedefs)
endfunction()
