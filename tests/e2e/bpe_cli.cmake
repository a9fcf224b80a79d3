# mixseq bpe learn / apply on the golden texts of tests/data/bpe, compared byte for byte with
# subword-nmt's output. Run by CTest: cmake -DMIXSEQ=<mixseq> -DDATA=<tests/data/bpe> -DWORK=<dir> -P bpe_cli.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status ERROR_VARIABLE errors)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "failed (${status}): ${ARGN}\n${errors}")
  endif()
endfunction()

function(expect_same actual expected)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${actual}" "${expected}" RESULT_VARIABLE differ)
  if(differ)
    message(FATAL_ERROR "${actual} differs from ${expected}")
  endif()
endfunction()

run("${MIXSEQ}" bpe learn -s 100 -i "${DATA}/train.txt" -o "${WORK}/codes")
expect_same("${WORK}/codes" "${DATA}/codes.ref")
run("${MIXSEQ}" bpe learn -s 300 -i "${DATA}/train.txt" -i "${DATA}/train2.txt" -o "${WORK}/codes_joint"
    --write-vocabulary "${WORK}/vocab_train" "${WORK}/vocab_train2")
expect_same("${WORK}/codes_joint" "${DATA}/codes_joint.ref")
expect_same("${WORK}/vocab_train2" "${DATA}/vocab_train2.ref")
run("${MIXSEQ}" --threads 3 bpe apply -c "${WORK}/codes_joint" --vocabulary "${WORK}/vocab_train2"
    --vocabulary-threshold 2 -i "${DATA}/test.txt" -o "${WORK}/test_vocab2.bpe")
expect_same("${WORK}/test_vocab2.bpe" "${DATA}/test_vocab2.bpe.ref")
run("${MIXSEQ}" bpe apply -c "${DATA}/codes.ref" --glossaries USA "<tag>\\w*</tag>" "\\d+" like
    -i "${DATA}/test.txt" -o "${WORK}/test_glossaries.bpe")
expect_same("${WORK}/test_glossaries.bpe" "${DATA}/test_glossaries.bpe.ref")
# stdin to stdout
run("${MIXSEQ}" bpe apply -c "${DATA}/codes.ref" INPUT_FILE "${DATA}/test.txt" OUTPUT_FILE "${WORK}/test.bpe")
expect_same("${WORK}/test.bpe" "${DATA}/test.bpe.ref")
file(REMOVE_RECURSE "${WORK}")
