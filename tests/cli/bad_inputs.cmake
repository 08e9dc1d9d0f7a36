# Hostile input and faults (GitHub issue 8): the catalogue in tests/data/bad/ and
# tests/data/configs/bad-*.yaml run through the real `tpusim` binary. Every case must exit with 2
# (bad input) and name the file and line:column, or the config key path — never a signal, never a
# sanitizer report, in bounded time (TIMEOUT) and memory (run_limited.sh: ulimit -v 4 GiB).
# Included from tests/cli/CMakeLists.txt; label `cli`.

# tpusim_limited_test(NAME RC REGEX ARGS...): run_limited.sh RC REGEX -- tpusim ARGS...
function(tpusim_limited_test name rc regex)
  add_test(NAME cli.${name}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_limited.sh ${rc} "${regex}" -- $<TARGET_FILE:tpusim>
            ${ARGN}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set(sanitized 0)
  if(TPUSIM_SANITIZE OR TPUSIM_FUZZ)
    set(sanitized 1)
  endif()
  set_tests_properties(cli.${name} PROPERTIES LABELS cli TIMEOUT 60
                       ENVIRONMENT "TPUSIM_SANITIZED=${sanitized}")
endfunction()
# tpusim_bad_input_test(NAME REGEX ARGS...): exit code 2.
function(tpusim_bad_input_test name regex)
  tpusim_limited_test(${name} 2 "${regex}" ${ARGN})
endfunction()

set(bad tests/data/bad)
set(badcfg tests/data/configs)

# Malformed HLO, every kind: through the whole `run` pipeline (parse -> verify -> compile -> run).
tpusim_bad_input_test(bad_unbalanced_braces
  "unbalanced_braces.hlo:8:1: error: unexpected end of file: computation '%main' opened at 3:35"
  run ${bad}/unbalanced_braces.hlo --config tiny)
tpusim_bad_input_test(bad_literal
  "bad_literal.hlo:5:34: error: bad literal: expected a number for f32, got 'three'"
  run ${bad}/bad_literal.hlo --config tiny)
tpusim_bad_input_test(bad_literal_count
  "literal_count.hlo:5:27: error: bad literal: dimension 0 of f32\\[4\\] has 4 elements, the value has 3"
  run ${bad}/literal_count.hlo --config tiny)
tpusim_bad_input_test(bad_undefined_operand
  "undefined_operand.hlo:5:53: error: use of undefined instruction '%b'"
  run ${bad}/undefined_operand.hlo --config tiny)
tpusim_bad_input_test(bad_cyclic_use
  "cyclic_use.hlo:6:3: error: cyclic use: '%y' uses '%x', which depends on '%y'"
  run ${bad}/cyclic_use.hlo --config tiny)
tpusim_bad_input_test(bad_self_use "self_use.hlo:5:8: error: cyclic use: '%x' uses itself"
  run ${bad}/self_use.hlo --config tiny)
tpusim_bad_input_test(bad_duplicate_name
  "duplicate_name.hlo:6:3: error: duplicate instruction name '%n' \\(first defined at 5:3\\)"
  run ${bad}/duplicate_name.hlo --config tiny)
tpusim_bad_input_test(bad_attribute_value
  "bad_direction.hlo:6:73: error: unknown value 'SIDEWAYS' for attribute 'direction'"
  run ${bad}/bad_direction.hlo --config tiny)
tpusim_bad_input_test(bad_contracting_dims
  "bad_contracting_dims.hlo:6:8: error: '%dot' \\(dot\\): .*contracting dimension 7 is out of range"
  run ${bad}/bad_contracting_dims.hlo --config tiny)
tpusim_bad_input_test(bad_element_type
  "bad_element_type.hlo:3:17: error: unknown or unsupported element type 'f33'"
  run ${bad}/bad_element_type.hlo --config tiny)
tpusim_bad_input_test(bad_negative_dim
  "negative_dim.hlo:3:23: error: expected a dimension size, got '-3'"
  run ${bad}/negative_dim.hlo --config tiny)
tpusim_bad_input_test(bad_layout "bad_layout.hlo:4:19: error: layout dimension 1 appears twice"
  run ${bad}/bad_layout.hlo --config tiny)
tpusim_bad_input_test(bad_parameter_gap
  "parameter_gap.hlo:3:7: error: computation '%main' has parameter 2 but no parameter\\(1\\)"
  run ${bad}/parameter_gap.hlo --config tiny)
tpusim_bad_input_test(bad_empty "empty.hlo:1:1: error: empty input: expected 'HloModule'"
  run ${bad}/empty.hlo --config tiny)
tpusim_bad_input_test(bad_binary_garbage "binary_garbage.hlo:2:1: error: unexpected character"
  run ${bad}/binary_garbage.hlo --config tiny)
tpusim_bad_input_test(bad_truncated "truncated.hlo:5:42: error: unexpected end of file"
  run ${bad}/truncated.hlo --config tiny)
tpusim_bad_input_test(bad_unknown_opcode "unknown_opcode.hlo:6:31: error: unknown opcode 'dott'"
  run ${bad}/unknown_opcode.hlo --config tiny)
tpusim_bad_input_test(bad_shape_mismatch
  "shape_mismatch.hlo:6:8: error: '%dot.3' \\(dot\\): shape mismatch: the operands give f32\\[4,4\\]"
  run ${bad}/shape_mismatch.hlo --config tiny)
# An op the lowering cannot handle: Unimplemented, exit 2, naming the instruction and opcode.
tpusim_bad_input_test(bad_unsupported_op "unsupported_op.hlo:5:8: error: %rng \\(rng\\): cannot lower"
  run ${bad}/unsupported_op.hlo --config tiny)

# Absurd dimensions: never allocated. A size that overflows int64 is rejected by the verifier; a
# legal 2 TiB operand does not fit HBM (exit 2); with HBM enlarged it runs timing-only (the check
# is skipped as too big) in bounded memory.
tpusim_bad_input_test(bad_absurd_dims
  "absurd_dims.hlo:5:3: error: '%a' \\(parameter\\): shape f32\\[99999999999,99999999999\\] is too large"
  run ${bad}/absurd_dims.hlo --config tiny)
tpusim_bad_input_test(bad_absurd_dims_timing_only "absurd_dims.hlo:5:3: error: .*is too large"
  run ${bad}/absurd_dims.hlo --timing-only)
tpusim_bad_input_test(bad_huge_dot_does_not_fit
  "huge_dot.hlo:7:3: error: %a \\(parameter\\): does not fit: HBM"
  run ${bad}/huge_dot.hlo --timing-only)
tpusim_bad_input_test(bad_near_int64_bytes
  "near_int64_bytes.hlo:6:3: error: %a \\(parameter\\): does not fit: HBM: a f32\\[2305843009213693951\\] of 9223372036854775804 bytes"
  run ${bad}/near_int64_bytes.hlo --timing-only)
tpusim_bad_input_test(bad_huge_dot_cpu_refuses
  "bf16\\[1048576,1048576\\] needs 2199023255552 bytes, over the limit of 4294967296 bytes"
  cpu ${bad}/huge_dot.hlo)

# Bad configs: the file and the key path.
tpusim_bad_input_test(config_absurd
  "bad-absurd.yaml: core.mxu.rows: expected a positive integer at most 4096, got 1099511627776"
  config show ${badcfg}/bad-absurd.yaml)
tpusim_bad_input_test(config_zero_clock "bad-zero-clock.yaml: chip.clock_hz: expected a positive"
  config show ${badcfg}/bad-zero-clock.yaml)
tpusim_bad_input_test(config_unknown_key "bad-unknown-key.yaml: core.mxu.rowz: "
  config show ${badcfg}/bad-unknown-key.yaml)
tpusim_bad_input_test(config_bad_type "bad-type.yaml: chip.hbm.capacity_bytes"
  config show ${badcfg}/bad-type.yaml)
tpusim_bad_input_test(config_bad_syntax "bad-syntax.yaml:5:5: error: end of sequence flow not found"
  config show ${badcfg}/bad-syntax.yaml)
tpusim_bad_input_test(config_base_cycle "bad-base-cycle.yaml: base: cycle"
  config show ${badcfg}/bad-base-cycle.yaml)
tpusim_bad_input_test(config_nan
  "bad-nan.yaml: chip.hbm.bandwidth_bytes_per_s: expected a number, got \".nan\""
  config show ${badcfg}/bad-nan.yaml)
tpusim_bad_input_test(run_config_negative "bad-negative.yaml: core.mxu.rows: expected a positive"
  run tests/golden/tiny_dot_bias_relu/model.hlo --config ${badcfg}/bad-negative.yaml)
tpusim_bad_input_test(run_set_absurd_vmem "--set core.vmem.capacity_bytes=1e30: core.vmem.capacity_bytes: expected an integer"
  run tests/golden/tiny_dot_bias_relu/model.hlo --config tiny --set core.vmem.capacity_bytes=1e30)
tpusim_bad_input_test(run_set_negative_chips "--set system.chips=-1: system.chips: expected a positive integer"
  run tests/golden/tiny_dot_bias_relu/model.hlo --config tiny --set system.chips=-1)
tpusim_bad_input_test(run_config_missing "configs/nope.yaml: no such file"
  run tests/golden/tiny_dot_bias_relu/model.hlo --config configs/nope.yaml)

# Missing files and folders given as files.
tpusim_bad_input_test(run_missing_model "tests/data/hlo/nope.hlo: no such file"
  run tests/data/hlo/nope.hlo --config tiny)
tpusim_bad_input_test(run_directory_model "tests/data: is a directory" run tests/data --config tiny)
tpusim_bad_input_test(exec_directory_program "tests/data: is a directory"
  exec tests/data --config tiny)
tpusim_bad_input_test(config_directory "configs: is a directory" config show configs)
string(REPEAT "x" 300 long_name)
tpusim_bad_input_test(cpu_inputs_name_too_long "input for ENTRY parameter 0 \\('x'\\): neither"
  cpu tests/golden/tiny_dot_bias_relu/model.hlo --inputs /tmp/${long_name}/${long_name})
tpusim_bad_input_test(config_base_name_too_long "base_name_too_long.yaml: base: .*(no such file|File name too long)"
  config show tests/data/fuzz_regressions/config/base_name_too_long.yaml)
tpusim_bad_input_test(disasm_truncated_binary
  "truncated.tbin: corrupt program file: instruction count 8 exceeds the file size"
  disasm ${bad}/truncated.tbin)

# Programs: VMEM overflow, inconsistent collectives, unbalanced loops, waits nothing satisfies.
tpusim_bad_input_test(exec_vmem_overflow
  "core 0 instruction 0 \\(tests/data/bad/vmem_overflow.tasm:3\\) dma.hbm_to_vmem: field 'dst': .*outside vmem"
  exec ${bad}/vmem_overflow.tasm --config tiny)
tpusim_bad_input_test(asm_verify_vmem_overflow "vmem_overflow.tasm:3\\) dma.hbm_to_vmem: .*outside vmem"
  asm ${bad}/vmem_overflow.tasm --config tiny -o ${CMAKE_CURRENT_BINARY_DIR}/vmem_overflow.tbin)
tpusim_bad_input_test(exec_inconsistent_collectives
  "core 1 instruction 0 \\(tests/data/bad/inconsistent_collectives.tasm:7\\) ici.all_gather: does not match core 0"
  exec ${bad}/inconsistent_collectives.tasm --config tiny-4)
tpusim_bad_input_test(asm_unbalanced_loop
  "unbalanced_loop.tasm:2:3: error: core 0: ctrl.loop without a matching ctrl.endloop"
  asm ${bad}/unbalanced_loop.tasm -o ${CMAKE_CURRENT_BINARY_DIR}/unbalanced_loop.tbin)
tpusim_bad_input_test(exec_endless_wait
  "endless_wait.tasm:2\\) sync.wait: field 'flag': flag 5 is waited on but nothing signals it"
  exec ${bad}/endless_wait.tasm --config tiny)

# Resource limits: cycles, wall clock (--max-seconds), check memory.
tpusim_bad_input_test(run_max_cycles "cycle limit of 100 cycles"
  run tests/golden/tiny_dot_bias_relu/model.hlo --config tiny --max-cycles 100)
tpusim_bad_input_test(run_max_seconds "wall-clock limit of 0.5 seconds|--max-seconds 0.5: still running"
  run benchmarks/workloads/gemm_bf16_8192.hlo --timing-only --mxu-model pe --max-seconds 0.5
  --max-instructions 10000000000000)
tpusim_bad_input_test(run_max_seconds_negative "--max-seconds: expected a number >= 0, got -1"
  run tests/golden/tiny_dot_bias_relu/model.hlo --config tiny --max-seconds -1)
tpusim_bad_input_test(exec_max_seconds "wall-clock limit of 1e-06 seconds|--max-seconds 1e-06: still running"
  exec ${bad}/long_loop.tasm --config tiny --max-seconds 1e-6)
tpusim_limited_test(run_max_check_bytes_timing_only 0 "more than --max-check-bytes 1000: ran timing-only"
  run tests/golden/tiny_dot_bias_relu/model.hlo --config tiny --max-check-bytes 1000)

# File-system faults (set-up in file_errors.sh; 77 = skipped, e.g. permission cases as root).
foreach(case unreadable_model unreadable_config unwritable_folder report_missing_folder
             report_is_a_folder trace_missing_folder asm_output_missing_folder)
  add_test(NAME cli.file_${case}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/file_errors.sh ${case} $<TARGET_FILE:tpusim>
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(cli.file_${case} PROPERTIES LABELS cli TIMEOUT 60 SKIP_RETURN_CODE 77)
endforeach()

# Interrupted runs leave no partial report/trace/CSV and no temporary file; exit 128 + signal,
# for every termination signal tpusim handles (common/output_set.h TerminationSignals).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  foreach(sig INT TERM HUP QUIT USR1 USR2 ALRM)
    add_test(NAME cli.interrupt_sig${sig}
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/interrupt_test.py
              $<TARGET_FILE:tpusim> ${sig}
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    set_tests_properties(cli.interrupt_sig${sig} PROPERTIES LABELS cli TIMEOUT 120)
  endforeach()
endif()

# Nonsense option values.
tpusim_bad_input_test(run_negative_replicas "--replicas: expected a device count from 0 to 1048576, got -5"
  run tests/golden/tiny_dot_bias_relu/model.hlo --config tiny --replicas -5)
tpusim_bad_input_test(run_negative_max_check_bytes "--max-check-bytes: expected a decimal integer from 0 to 9223372036854775807, got -1"
  run tests/golden/tiny_dot_bias_relu/model.hlo --config tiny --max-check-bytes -1)
tpusim_bad_input_test(run_too_many_replicas "1000000 devices \\(replicas x partitions\\) need 1000000 TensorCores but config .tiny. has 1.*more than the largest"
  run tests/golden/tiny_dot_bias_relu/model.hlo --config tiny --replicas 1000000)
tpusim_bad_input_test(exec_dump_out_of_range "--dump: bytes \\[0xfffffffffffffff0"
  exec examples/matmul_relu.tasm --config tiny --dump hbm:0xfffffffffffffff0:16:f32)

# Collectives that disagree across the cores of a group (issue 6): a located error, exit 2.
tpusim_bad_input_test(exec_collective_mismatch
  "collective_mismatch.tasm:8\\) ici.all_reduce: does not match core 0 instruction 0 of the same group: field 'count' differs \\(4 vs 8\\)"
  exec ${bad}/collective_mismatch.tasm --config tiny-4)

# A floating-point dot on a chip whose MXU has no floating-point path (TPU v1): located, exit 2.
tpusim_bad_input_test(run_float_dot_on_tpu_v1
  "model.hlo:7:3: error: %d \\(dot\\): cannot lower: a f32 x f32 dot on 'tpu-v1', whose MXU has no floating-point path"
  run tests/golden/tiny_dot_bias_relu/model.hlo --config tpu-v1)
# Element types a TPU cannot hold (issue 16): the op and the type, with the reason and the remedy.
tpusim_bad_input_test(bad_f64_on_tpu
  "f64_on_tpu.hlo:6:8: error: %y \\(dot\\): cannot lower: element type f64: a TPU has no 64-bit floating point"
  run ${bad}/f64_on_tpu.hlo)
# A variadic scatter whose combiner mixes its operands (issue 16 item 2): refused by name, with
# what is supported (one operand, or several combined each on its own).
tpusim_bad_input_test(bad_scatter_variadic_mixed
  "scatter_variadic_mixed.hlo:20:8: error: %s \\(scatter\\): cannot lower: a variadic scatter whose combiner mixes its operands"
  run ${bad}/scatter_variadic_mixed.hlo)
# fft (issue 16 item 2): refused naming the fft and what is supported.
tpusim_bad_input_test(bad_fft_complex
  "fft_complex.hlo:4:3: %a \\(parameter\\): cannot lower: element type c128"
  run ${bad}/fft_complex.hlo)
