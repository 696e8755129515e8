# CPack: `cpack -G DEB` in an optimised build folder (scripts/setup.sh package).
# Depends is computed by dpkg-shlibdeps (dpkg-dev) from the libraries the
# binary really links, so a KSR_PORTABLE build gets the shorter list by itself;
# the libraries loaded with dlopen are added by name below.
set(CPACK_PACKAGE_NAME kasm-session-runtime)
set(CPACK_PACKAGE_VENDOR "The kasm-session-runtime authors")
set(CPACK_PACKAGE_CONTACT "The kasm-session-runtime authors <kasm-session-runtime@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "tests desktop apps inside remote-desktop (Kasm, X11) sessions")
set(CPACK_PACKAGE_DESCRIPTION
  "One executable that waits for the display and the app, acts through the best channel\n\
(CDP, declared positions, AT-SPI, a vision model), checks, decides a verdict and writes\n\
evidence (trace.jsonl, report.json, report.md, screenshots, DONE last).")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_RESOURCE_FILE_LICENSE "${CMAKE_SOURCE_DIR}/LICENSE")
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libcurl is loaded when a transfer is made (dlopen, src/backend/http/curl_body.c),
# so dpkg-shlibdeps does not see it: the package that ships libcurl.so.4 here
# (libcurl4 on Debian 12) is a dependency by name; shlibdeps' list follows it.
execute_process(COMMAND dpkg-query -S "*/libcurl.so.4" OUTPUT_VARIABLE _ksr_curl_owner
                ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REGEX MATCH "^[^:,]+" _ksr_curl_pkg "${_ksr_curl_owner}")
if(NOT _ksr_curl_pkg)
  set(_ksr_curl_pkg libcurl4)
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${_ksr_curl_pkg}")
# --xvfb starts these; a Kasm session already has a display, so they are not
# needed to test on :1 and stay recommendations.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "xvfb, openbox, dbus, at-spi2-core")
# The video's FFmpeg libraries are loaded when a video is asked for (dlopen), so
# dpkg-shlibdeps does not see them: recommended by name, the headers' majors.
if(KSR_VIDEO)
  foreach(_ksr_av libavcodec libavformat libswscale libavutil)
    string(REGEX MATCH "^[0-9]+" _ksr_major "${VIDEO_DEPS_${_ksr_av}_VERSION}")
    string(APPEND CPACK_DEBIAN_PACKAGE_RECOMMENDS ", ${_ksr_av}${_ksr_major}")
  endforeach()
endif()
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "chromium")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/kasm-session-runtime/kasm-session-runtime")
include(CPack)
