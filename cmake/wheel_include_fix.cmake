# Passed to cmake as -DCMAKE_PROJECT_INCLUDE by scripts/setup.sh when interfaces are built
# against the ROS 2 PyPI wheels.
#
# Why: the wheels' exported targets (share/*/cmake/export_*Export.cmake) carry include
# directories of the machine the wheels were built on (/opt/python/cp3xx-cp3xx/...). They do
# not exist here and cmake's generate step refuses imported targets with missing include
# directories. Dropping exactly those entries is correct: the package's own Python extension
# gets the real Python and numpy include directories from FindPython3 anyway. Deferred to the
# end of configure so that it sees every imported target, and it touches nothing that exists,
# so it is a no-op against a normal ROS 2 install.

function(_sweetie_drop_missing_wheel_includes)
  get_property(_targets DIRECTORY "${CMAKE_SOURCE_DIR}" PROPERTY IMPORTED_TARGETS)
  foreach(_target IN LISTS _targets)
    get_target_property(_dirs ${_target} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT _dirs)
      continue()
    endif()
    set(_kept "")
    set(_dropped FALSE)
    foreach(_dir IN LISTS _dirs)
      if(_dir MATCHES "^/opt/python/" AND NOT EXISTS "${_dir}")
        set(_dropped TRUE)
      else()
        list(APPEND _kept "${_dir}")
      endif()
    endforeach()
    if(_dropped)
      set_target_properties(${_target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_kept}")
    endif()
  endforeach()
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _sweetie_drop_missing_wheel_includes)
