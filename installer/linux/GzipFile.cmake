# cmake -DINPUT=file -DOUTPUT=file.gz -P GzipFile.cmake: gzip -9n (no name, no time stamp: the
# same input gives the same bytes, as Debian's man pages want).
find_program(GZIP_EXECUTABLE gzip REQUIRED)
get_filename_component(out_dir "${OUTPUT}" DIRECTORY)
file(MAKE_DIRECTORY "${out_dir}")
execute_process(COMMAND "${GZIP_EXECUTABLE}" -9 -n -c "${INPUT}" OUTPUT_FILE "${OUTPUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip ${INPUT} failed: ${rc}")
endif()
