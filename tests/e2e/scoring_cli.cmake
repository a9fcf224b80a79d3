# mixseq bleu / mixseq chrf end to end: writes a tiny system output and two references (a
# byte-order mark, an empty hypothesis, a missing reference line), runs the commands and compares
# their output with what sacreBLEU 2.6 printed for the same files (sacrebleu REF... -i HYP ...),
# "@V@" standing for mixseq's signature version.
# Run by CTest as: cmake -DMIXSEQ=<mixseq> -DWORK_DIR=<dir> -DVERSION=<x.y.z> -P scoring_cli.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
string(ASCII 239 187 191 BOM)
file(WRITE "${WORK_DIR}/hyp" "${BOM}The cat sat on the mat.\nIt costs $1,000.50 (approx.).\nPages 10-20, a 3-year-old.\n\n")
file(WRITE "${WORK_DIR}/ref1" "The cat is sitting on the mat.\nIt costs $1,000.50 (about).\nPages 10-20 of a 3-year-old.\nNothing.\n")
file(WRITE "${WORK_DIR}/ref2" "The cat sat on a mat.\nIt costs about $1,000.50.\n\nNothing here.\n")
file(WRITE "${WORK_DIR}/short" "one line\n")
set(V "2.x+mixseq-${VERSION}")

# expect_output(<expected stdout> <mixseq arguments...>): runs mixseq in WORK_DIR, fails unless it
# exits 0 and prints exactly the expected text (plus a final newline).
function(expect_output expected)
  execute_process(COMMAND "${MIXSEQ}" ${ARGN} WORKING_DIRECTORY "${WORK_DIR}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REPLACE "@V@" "${V}" expected "${expected}")
  if(NOT rc EQUAL 0 OR NOT out STREQUAL "${expected}\n")
    message(FATAL_ERROR "mixseq ${ARGN}\nexit ${rc}, stderr: ${err}\ngot:\n${out}\nexpected:\n${expected}")
  endif()
endfunction()

expect_output("BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:@V@ = 56.80 84.6/73.9/55.0/35.3 (BP = 0.962 ratio = 0.963 hyp_len = 26 ref_len = 27)"
              bleu ref1 ref2 -i hyp -w 2 -f text)
expect_output("51.1" bleu ref1 -i hyp -b)
# What sacreBLEU 2.6 prints by default (JSON), and with several metrics (-m): a JSON list, the
# bare scores as a list with -b, or text lines aligned at their " = ".
expect_output("{
 \"name\": \"BLEU\",
 \"score\": 51.1,
 \"signature\": \"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:@V@\",
 \"verbose_score\": \"80.8/65.2/50.0/35.3 (BP = 0.926 ratio = 0.929 hyp_len = 26 ref_len = 28)\",
 \"nrefs\": \"1\",
 \"case\": \"mixed\",
 \"eff\": \"no\",
 \"tok\": \"13a\",
 \"smooth\": \"exp\",
 \"version\": \"@V@\"
}" bleu ref1 -i hyp)
expect_output("[
51.1,
63.1
]" chrf ref1 -i hyp -m bleu chrf -b)
expect_output("  BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:@V@ = 51.13 80.8/65.2/50.0/35.3 (BP = 0.926 ratio = 0.929 hyp_len = 26 ref_len = 28)
chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:@V@ = 63.07" bleu ref1 -i hyp -m chrf bleu -f text -w 2)
expect_output("[
{
 \"name\": \"BLEU\",
 \"score\": 51.1,
 \"signature\": \"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:@V@\",
 \"verbose_score\": \"80.8/65.2/50.0/35.3 (BP = 0.926 ratio = 0.929 hyp_len = 26 ref_len = 28)\",
 \"nrefs\": \"1\",
 \"case\": \"mixed\",
 \"eff\": \"no\",
 \"tok\": \"13a\",
 \"smooth\": \"exp\",
 \"version\": \"@V@\"
},
{
 \"name\": \"chrF2\",
 \"score\": 63.1,
 \"signature\": \"nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:@V@\",
 \"nrefs\": \"1\",
 \"case\": \"mixed\",
 \"eff\": \"yes\",
 \"nc\": \"6\",
 \"nw\": \"0\",
 \"space\": \"no\",
 \"version\": \"@V@\"
}
]" bleu ref1 -i hyp -m bleu chrf)
expect_output("BLEU|nrefs:2|case:lc|eff:yes|tok:13a|smooth:exp|version:@V@ = 57.2 85.7/83.3/60.0/25.0 (BP = 1.000 ratio = 1.000 hyp_len = 7 ref_len = 7)
BLEU|nrefs:2|case:lc|eff:yes|tok:13a|smooth:exp|version:@V@ = 51.3 77.8/62.5/42.9/33.3 (BP = 1.000 ratio = 1.125 hyp_len = 9 ref_len = 8)
BLEU|nrefs:2|case:lc|eff:yes|tok:13a|smooth:exp|version:@V@ = 65.8 90.0/77.8/62.5/42.9 (BP = 1.000 ratio = 1.000 hyp_len = 10 ref_len = 10)
BLEU|nrefs:2|case:lc|eff:yes|tok:13a|smooth:exp|version:@V@ = 0.0 0.0/0.0/0.0/0.0 (BP = 0.000 ratio = 0.000 hyp_len = 0 ref_len = 2)"
              bleu ref1 ref2 -i hyp -sl -lc)
expect_output("{
 \"name\": \"chrF2++\",
 \"score\": 67.9,
 \"signature\": \"nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:@V@\",
 \"nrefs\": \"2\",
 \"case\": \"mixed\",
 \"eff\": \"yes\",
 \"nc\": \"6\",
 \"nw\": \"2\",
 \"space\": \"no\",
 \"version\": \"@V@\"
}" chrf ref1 ref2 -i hyp -cw 2 --json)

# The system output on stdin.
execute_process(COMMAND "${MIXSEQ}" chrf ref1 -sh -f text WORKING_DIRECTORY "${WORK_DIR}" INPUT_FILE "${WORK_DIR}/hyp"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out)
string(REPLACE "@V@" "${V}" expected "chrF2|#:1|c:mixed|e:yes|nc:6|nw:0|s:no|v:@V@ = 63.1\n")
if(NOT rc EQUAL 0 OR NOT out STREQUAL expected)
  message(FATAL_ERROR "mixseq chrf ref1 -sh -f text < hyp: exit ${rc}, got '${out}', expected '${expected}'")
endif()

# Different line counts: a non-zero exit and a message naming every file and count.
execute_process(COMMAND "${MIXSEQ}" bleu ref1 short -i hyp WORKING_DIRECTORY "${WORK_DIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "'hyp' has 4 lines, 'ref1' has 4, 'short' has 1")
  message(FATAL_ERROR "mixseq bleu ref1 short -i hyp: exit ${rc}, stderr: ${err}")
endif()
