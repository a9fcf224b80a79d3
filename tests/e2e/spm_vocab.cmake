# End to end through the mixseq binary, where LibTorch's libprotobuf and libsentencepiece share
# one process (src/text/sentencepiece_module.h): synth -> spm train -> spm encode (checked
# against Debian's spm_encode when present) -> spm decode (gives the text back) -> vocab build.
# cmake -DMIXSEQ=<mixseq> -DWORK_DIR=<folder> [-DSPM_ENCODE=<spm_encode>] -P spm_vocab.cmake

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "failed (${status}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

function(expect_same_file actual expected)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${actual}" "${expected}" RESULT_VARIABLE differs)
  if(differs)
    message(FATAL_ERROR "'${actual}' differs from '${expected}'")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(data "${WORK_DIR}/data")
set(model "${WORK_DIR}/spm, v1/joint")  # a space and a comma: nothing may split the path
run("${MIXSEQ}" synth -o "${data}" --train-size 2000)
run("${MIXSEQ}" spm train --input "${data}/train.en" --input "${data}/train.de" --model-prefix "${model}"
    --vocab-size 200)
foreach(lang en de)
  run("${MIXSEQ}" --threads 3 spm encode -m "${model}.model" -i "${data}/train.${lang}" -o "${WORK_DIR}/train.spm.${lang}")
  if(SPM_ENCODE)
    run("${SPM_ENCODE}" "--model=${model}.model" "--output=${WORK_DIR}/train.debian.${lang}" "${data}/train.${lang}")
    expect_same_file("${WORK_DIR}/train.spm.${lang}" "${WORK_DIR}/train.debian.${lang}")
  endif()
  run("${MIXSEQ}" spm decode -m "${model}.model" -i "${WORK_DIR}/train.spm.${lang}" -o "${WORK_DIR}/train.decoded.${lang}")
  expect_same_file("${WORK_DIR}/train.decoded.${lang}" "${data}/train.${lang}")
endforeach()
run("${MIXSEQ}" vocab build -i "${WORK_DIR}/train.spm.en" -i "${WORK_DIR}/train.spm.de" -o "${WORK_DIR}/vocab.txt")
file(READ "${WORK_DIR}/vocab.txt" vocab)
string(REGEX MATCHALL "\n" lines "${vocab}")
list(LENGTH lines size)
math(EXPR remainder "${size} % 8")
if(NOT remainder EQUAL 0 OR size LESS 100 OR NOT vocab MATCHES "^<pad> 0\n<unk> 0\n<s> 0\n</s> 0\n")
  message(FATAL_ERROR "vocab.txt has ${size} entries; expected a multiple of 8, at least 100, specials first")
endif()
