# KSR_PORTABLE: one binary for many distributions (Kasm images are mostly
# Ubuntu, of several releases). The libraries whose sonames differ between
# releases (libwebsockets.so.17/.19, libcjson, libyaml, libpcre2) and libcap,
# which libwebsockets pulls in, are linked from static archives; what every
# desktop image carries (X11, Xtst, Xext, Xrandr, curl, png, zlib, atspi, glib, dbus,
# OpenSSL 3, libc) stays shared. tests/integration/test_package.py holds the
# allowed soname list and fails when the binary needs another one.
#
# Included right after the layers' pkg_check_modules (CORE_DEPS, BACKEND_DEPS,
# SCENARIO_DEPS): it rewrites each imported target's link list in place, so a
# module added later is linked as before (shared) and shows up in that test if
# it is not on the list.
if(NOT KSR_PORTABLE)
  return()
endif()

set(_ksr_static_names websockets cjson yaml pcre2-8 cap)
set(_ksr_need_cjson_source OFF)
foreach(_ksr_target CORE_DEPS BACKEND_DEPS SCENARIO_DEPS)
get_target_property(_ksr_libs PkgConfig::${_ksr_target} INTERFACE_LINK_LIBRARIES)
set(_ksr_new_libs "")
foreach(_lib IN LISTS _ksr_libs)
  get_filename_component(_name "${_lib}" NAME)
  get_filename_component(_dir "${_lib}" DIRECTORY)
  string(REGEX REPLACE "^lib(.*)\\.so.*$" "\\1" _short "${_name}")
  if(NOT _short IN_LIST _ksr_static_names)
    list(APPEND _ksr_new_libs "${_lib}")
  elseif(EXISTS "${_dir}/lib${_short}.a")
    list(APPEND _ksr_new_libs "${_dir}/lib${_short}.a")
  elseif(_short STREQUAL "cjson")
    # Debian's libcjson-dev ships no libcjson.a: compile its source instead.
    set(_ksr_need_cjson_source ON)
  else()
    message(FATAL_ERROR "KSR_PORTABLE: no static archive lib${_short}.a beside ${_lib} "
      "(see packaging/README.md for building one)")
  endif()
endforeach()
set_property(TARGET PkgConfig::${_ksr_target} PROPERTY INTERFACE_LINK_LIBRARIES "${_ksr_new_libs}")
message(STATUS "KSR_PORTABLE: ${_ksr_target} links ${_ksr_new_libs}")
endforeach()
set(_ksr_new_libs "")

if(_ksr_need_cjson_source)
  set(KSR_CJSON_SOURCE_DIR "" CACHE PATH
    "cJSON source folder (cJSON.c, cJSON.h) for KSR_PORTABLE; packaging/fetch-cjson-source.sh")
  if(NOT EXISTS "${KSR_CJSON_SOURCE_DIR}/cJSON.c")
    message(FATAL_ERROR "KSR_PORTABLE: this system has no libcjson.a (Debian ships only the "
      "shared library). Fetch the matching source with packaging/fetch-cjson-source.sh DIR "
      "and configure with -DKSR_CJSON_SOURCE_DIR=DIR")
  endif()
  # The source's own header, under the name the code includes (<cjson/cJSON.h>),
  # ahead of the system's, so header and code are of one version.
  configure_file("${KSR_CJSON_SOURCE_DIR}/cJSON.h"
    "${CMAKE_BINARY_DIR}/ksr-cjson/include/cjson/cJSON.h" COPYONLY)
  add_library(ksr_cjson STATIC "${KSR_CJSON_SOURCE_DIR}/cJSON.c")
  target_include_directories(ksr_cjson PUBLIC "${CMAKE_BINARY_DIR}/ksr-cjson/include/cjson")
  target_compile_options(ksr_cjson PRIVATE -w) # third-party code, built as shipped
  get_target_property(_ksr_incs PkgConfig::CORE_DEPS INTERFACE_INCLUDE_DIRECTORIES)
  set_property(TARGET PkgConfig::CORE_DEPS PROPERTY INTERFACE_INCLUDE_DIRECTORIES
    "${CMAKE_BINARY_DIR}/ksr-cjson/include" ${_ksr_incs})
endif()

# libwebsockets.a's own needs: OpenSSL (shared: libcurl already needs the same
# sonames on every distribution that ships libssl.so.3) and libcap (static).
find_package(OpenSSL REQUIRED)
find_library(KSR_LIBCAP_STATIC NAMES libcap.a)
if(NOT KSR_LIBCAP_STATIC)
  message(FATAL_ERROR "KSR_PORTABLE: libcap.a not found (Debian: libcap-dev)")
endif()
# ksr_cjson (above) belongs to the core's deps, libcap and OpenSSL to the backend's.
if(_ksr_need_cjson_source)
  get_target_property(_ksr_core_libs PkgConfig::CORE_DEPS INTERFACE_LINK_LIBRARIES)
  set_property(TARGET PkgConfig::CORE_DEPS PROPERTY INTERFACE_LINK_LIBRARIES
    "${_ksr_core_libs};ksr_cjson")
endif()
get_target_property(_ksr_backend_libs PkgConfig::BACKEND_DEPS INTERFACE_LINK_LIBRARIES)
set_property(TARGET PkgConfig::BACKEND_DEPS PROPERTY INTERFACE_LINK_LIBRARIES
  "${_ksr_backend_libs};${KSR_LIBCAP_STATIC};OpenSSL::SSL;OpenSSL::Crypto;${CMAKE_DL_LIBS}")
