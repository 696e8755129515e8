# Install layout (cmake --install, and the .deb): the binary, the man page
# (gzipped, as Debian policy wants), bash completion, docs and the scenario
# examples. Examples go to share/kasm-session-runtime/scenarios, not under
# share/doc: Ubuntu's minimised Docker images (the base of most Kasm images)
# drop /usr/share/doc/* and /usr/share/man/* at install time (dpkg path-exclude).
include(GNUInstallDirs)

find_program(KSR_GZIP gzip)
set(_ksr_man "${CMAKE_SOURCE_DIR}/man/kasm-session-runtime.1")
if(KSR_GZIP)
  # -n: no name or time stamp in the archive, so builds are reproducible.
  add_custom_command(OUTPUT "${CMAKE_BINARY_DIR}/kasm-session-runtime.1.gz"
    COMMAND ${KSR_GZIP} -9n -c "${_ksr_man}" > "${CMAKE_BINARY_DIR}/kasm-session-runtime.1.gz"
    DEPENDS "${_ksr_man}" VERBATIM)
  add_custom_target(ksr_man ALL DEPENDS "${CMAKE_BINARY_DIR}/kasm-session-runtime.1.gz")
  # Also when only the binary is built (CMAKE_SKIP_INSTALL_ALL_DEPENDENCY).
  add_dependencies(kasm-session-runtime ksr_man)
  set(_ksr_man_file "${CMAKE_BINARY_DIR}/kasm-session-runtime.1.gz")
else()
  set(_ksr_man_file "${_ksr_man}")
endif()

install(TARGETS kasm-session-runtime RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES "${_ksr_man_file}" DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES completion/kasm-session-runtime.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME kasm-session-runtime)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME copyright)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
  FILES_MATCHING PATTERN "*.md" PATTERN "*.json")
install(DIRECTORY scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kasm-session-runtime/scenarios
  FILES_MATCHING PATTERN "*.yaml" PATTERN "*.yml" PATTERN "*.png")
