"""Writes docs/mutation/conform-run.md from mutmut 3's run over src/sonnx/conform/ and src/sonnx/run/.

usage (in mutmut's mutants/ folder, with the project's venv):
    python classify_conform_run.py RECHECK.txt > docs/mutation/conform-run.md
RECHECK.txt holds lines "NAME EXIT_CODE" from docs/mutation/recheck.py: surviving mutants run
against tests/conform/test_rewrites_checks_and_reports.py and tests/run/test_files_comparison_and_opsets.py (nonzero: that
file kills the mutant). Every other survivor is classified: first by CLASSES (a reason per
function or per group of mutant numbers, written after reading each mutant's diff), else by one
mechanical rule, MESSAGE_RULE below, which only ever says "message text only"."""
from __future__ import annotations

import ast
import difflib
import glob
import io
import json
import re
import sys
import tokenize

EQ, MSG, OPEN = "equivalent", "message/help text only", "not killed"

# function (module.x_name as mutmut names it, module relative to sonnx.) ->
#     [(mutant numbers or None for all, category, why)]
RESHAPE = ("numpy 2.4 (the pinned version) reads any negative size in reshape as 'the rest', "
           "like -1")
WARN = ("numpy's error state for the float64 widening of a signalling NaN: at most a "
        "RuntimeWarning on stderr, the values are the same")
ASTYPE_NONE = "astype(None) is astype(float64): the same array"
HELP_TEXT = ("argparse help, description or metavar text: only --help and the usage line change "
             "(the help text changes no verdict, exit status or file)")
WHY_TEXT = ("which fallback explanation a finding's why_not_rewritten carries (the finding, its rule, "
            "location, the verdict and the exit status are unchanged)")
CLASSES: dict[str, list] = {
    # ---------------------------------------------------------------- conform
    "conform.api.x__why": [(None, MSG, WHY_TEXT)],
    "conform.api.x__utf8_only": [
        ({5, 7}, EQ, "data only lets clean_model skip the walk of an all-ASCII model: without it every "
                     "field is walked, with the same result"),
        ({8, 9, 10, 11, 12, 13, 14, 15, 16}, MSG, "the text of the ConformError (still refused, exit status 2)"),
    ],
    "conform.api.x_conform": [
        ({21, 22, 23, 36}, MSG, "the text of a progress line on stderr"),
        ({4}, EQ, "the stand-in for no progress callback returns nothing that is read"),
    ],
    "conform.api.x_load": [
        ({40}, EQ, "data only lets clean_model skip the walk of an all-ASCII model: without it every "
                   "field is walked, with the same result"),
        ({5, 12, 16, 17, 18, 23, 27, 34, 41, 57, 58, 59}, MSG, "the text of an error or of the name it shows"),
    ],
    "conform.rewrite.x__declarations": [(None, MSG, "the 'what' word of a pinned declaration in a rewrite's detail")],
    "conform.rewrite.x__dims_of": [({1}, EQ, "a non-tensor type has no tensor_type shape, so both conditions "
                                             "give [] for it, and the dims of a tensor type either way")],
    "conform.rewrite.x_symbolic_names": [
        ({4}, EQ, "a non-empty dim_param means the dimension's oneof is dim_param"),
        ({11}, EQ, "the dict's values are never read (it is an ordered set of its keys)"),
    ],
    "conform.rewrite.x_pin_dims": [
        ({20, 84}, EQ, "a non-empty dim_param (and --dim names are non-empty) means the oneof is dim_param"),
        ({8, 10, 11, 12, 44, 45, 46, 47, 48, 49, 50, 51}, MSG, "the text of the ConformError or of the pin-dim detail"),
        ({53}, MSG, "whether the inputs after one with an initializer get their PROF-R2 blockers: a "
                    "reason only (the validator's findings are the same)"),
    ],
    "conform.check.x__one_line": [(None, MSG, "the one-line text of an onnxruntime error in a check's reason")],
    "conform.check.x__bits": [
        ({6}, EQ, RESHAPE),
        ({8, 17, 19}, EQ, "an empty output: any empty 2-D or 1-D view compares as no difference"),
    ],
    "conform.check.x__hex": [(None, MSG, "how the first differing value is spelled in the record")],
    "conform.check.x_compare": [({67, 73}, EQ, RESHAPE),
                                ({51}, EQ, "the index of a 0-d array unravels to [] as well")],
    "conform.cli.x__cmd_conform": [
        ({8, 16, 17, 20, 24, 43, 49, 50, 52, 56, 111, 112, 114, 116, 117, 118, 122, 123}, MSG,
         "the text of a one-line error (still one line on stderr, exit status 2)"),
        ({29}, EQ, "progress '' and None are both falsy: conform() then reports no progress either way"),
        ({76, 77, 78, 79}, EQ, "the key is then copied a second time with the same value: a dict keeps the "
                               "first position, so the report is the same"),
        ({86, 89, 93}, EQ, "ensure_ascii=True makes the report ASCII, the same bytes in any "
                           "ASCII-compatible encoding ('UTF-8' is 'utf-8')"),
        ({103}, EQ, "ensure_ascii=True is json.dump's default"),
        ({121}, EQ, "only an OSError reaches this handler (the report holds no NaN for json.dump to refuse "
                    "with ValueError), and every OSError has a strerror attribute"),
        ({98, 104, 108}, EQ, "allow_nan only matters for a float NaN or infinity, and the report holds "
                             "none: values are written as hex strings (check._hex)"),
        ({99, 105}, EQ, "default= is only asked for values json cannot write, and the report holds only "
                        "str, int, bool, None, lists and dicts (test_every_kind_of_report_matches_its_schema)"),
    ],
    "conform.check.x__feeds_spec": [
        ({17, 33}, MSG, "the text of the check's 'not checked' reason"),
        ({34, 35, 37}, EQ, "every element type numpy holds with kind f, i, u or b that onnx maps to numpy "
                           "is in the list, and every type in the list has one of those kinds"),
    ],
    "conform.check.x__edge_values": [
        ({25}, EQ, "'XXiuXX' holds 'i' and 'u': the substring test is the same for every numpy kind"),
        ({46, 47, 48, 49, 50}, EQ, "the fallback for a kind with no edge values is never reached: "
                                   "_feeds_spec feeds only kinds f, i, u, b"),
    ],
    "conform.check.x_bit_identity": [
        ({97}, MSG, "the text of a progress line on stderr"),
        ({118, 119}, EQ, "the record's status is already 'not checked' (its initial value): the line only "
                         "restates it"),
        ({215, 220}, MSG, "which output names the failed check's reason text lists (status 'failed' either way)"),
    ],
    "conform.check.x_make_input": [
        ({57}, MSG, "the text of a TypeError _feeds_spec never lets happen"),
        ({28}, EQ, "'XXiuXX' holds 'i' and 'u': the substring test is the same for every numpy kind"),
        ({6, 8}, EQ, "np.prod of a tuple of ints is int64 on the 64-bit platforms sonnx supports"),
        ({74}, EQ, "rng.random() gives exactly 0.1 with probability 2^-53; the pinned seeds' inputs are "
                   "unchanged (test_seeded_inputs_are_reproducible_and_hold_what_their_seed_promises)"),
    ],
    "conform.check.x__session": [({8}, MSG, "onnxruntime's own log level (its warnings on stderr), no result")],
    "conform.cli.x__summary": [(None, MSG, "the wording of the summary on stdout (the report file is unchanged)")],
    "conform.cli.x__writable": [(None, MSG, "the text of the refusal (still refused, exit status 2)")],
    "conform.rewrite.x__constant_tensor": [
        ({49, 51, 61, 63}, EQ, "numpy's default integer for Python ints is int64 on the 64-bit platforms "
                               "sonnx supports"),
        ({15, 27, 40, 52, 65, 77, 90}, EQ, "the reason is read only when no tensor is returned"),
        ({91, 92, 93}, MSG, "which reason a Constant conform cannot store gives (it stays a node with its "
                            "PROF-R1 blocker either way)"),
    ],
    "conform.rewrite.x__broadcasts_to": [
        ({2}, EQ, "onnx infers a Mul/Add/Sub/Gemm result of at least its operand's rank, so a longer operand "
                  "never reaches here (and np.broadcast_to would refuse it, caught as a blocker)"),
    ],
    "conform.rewrite.x_materialise_broadcasts": [
        ({51}, EQ, "NAME_D1xD2... is never the name of another (source, target) pair, so the name just "
                   "made is never met again: adding it to taken changes nothing"),
        ({64}, MSG, "the text of a blocker's reason (the RuntimeError it carries)"),
        ({90, 93}, MSG, "whether a legacy-broadcast blocker (a reason only) is recorded for a node that "
                        "is left unrewritten either way"),
        ({112}, EQ, "every ONNX node has an output: node.output is never empty here"),
        ({104}, EQ, "a Blocker's tensor is None by default"),
        ({109}, EQ, "the version of Mul/Add/Sub/Gemm at one opset is below 7 for all four or for none, so "
                    "once one node is skipped for its version every later one is too"),
        ({13}, EQ, "every graph output is a node's output, a graph input or an initializer: all already in taken"),
        ({182}, MSG, "a static operand that does not broadcast to the result (onnx's inference refuses such "
                     "a node) then gets a 'cannot be read' blocker, a reason only, instead of none"),
        ({276, 277}, EQ, "unreachable: only a constant (an initializer that is no graph input, "
                         "`constants`) is ever materialised, and g.input is not changed before this "
                         "point, so no unread original is in g.input and keep_in is always g.input "
                         "(276 rebuilds the same list; 277's extend(None) is never run)"),
        ({127, 128, 134, 135, 137, 138}, MSG, "the operand letter (A, B, C) in a detail or reason"),
        ({196, 200}, EQ, "the blocker is matched by its node index (api._why); its tensor is read only "
                         "when it has no node index"),
        ({227}, MSG, "the text of a blocker's reason"),
        ({234}, MSG, "tidy_declarations then words the removal of the stale value_info of a rewritten "
                     "tensor otherwise (it is removed either way)"),
    ],
    "conform.rewrite.x_parse_dims": [({28}, MSG, "the text of the ConformError (still refused)")],
    "conform.rewrite.x_check_dims": [({2}, MSG, "the text of the ConformError (still refused)")],
    "conform.rewrite.x_shapes": [
        ({8}, EQ, "strict_mode=False is onnx.shape_inference.infer_shapes' default"),
        ({14, 25, 30, 37}, MSG, "a shapeless or symbolic tensor then reads as another kind of non-static "
                                "shape: only which blocker reason a finding carries changes (no constant "
                                "has such a shape: an initializer's dims are read from the tensor)"),
    ],
    "conform.rewrite.x_tidy_declarations": [
        ({9}, EQ, "strict_mode=False is onnx.shape_inference.infer_shapes' default"),
        ({78}, EQ, "got is never None here (every graph output is in the probe's graph.output), so the "
                   "mutant differs only for a non-tensor output, which then goes on to the comparison: "
                   "its key is ('other', serialized type), equal to the inferred one (continue) or, when "
                   "onnx refined it, of another length or with a differing byte (the 'real disagreement' "
                   "continue), or the inferred key is a tensor's and its element type is not 'other' "
                   "(the element-type continue): never a rewrite either way"),
        ({99, 103, 113, 118}, EQ, "unreachable with the pinned onnx: non-strict inference of a graph "
                                  "output keeps the declaration whole on any conflict and otherwise only "
                                  "refines it (fills a missing shape, unknown or named dims, an undefined "
                                  "element type), so the inferred type never has another rank, another "
                                  "known dim or another defined element type than the declaration (checked "
                                  "on declarations (2, 4), (6,), (?, 4), ('n', 'm', 'k'), float16 and int64 "
                                  "of a float (2, 3) result)"),
        ({38, 39, 42, 119}, MSG, "the text of a removal reason or of the declare-output-shape detail"),
    ],
    "conform.rewrite.x__shape_text": [(None, MSG, "how a shape is written in a blocker's reason")],
    "conform.rewrite.x__computed_reason": [(None, MSG, "the wording of a blocker's reason")],
    "conform.rewrite.x__elem": [(None, MSG, "how an element type is spelled in a rewrite's detail or a reason")],
    "conform.rewrite.x__shown_type": [
        (None, MSG, "how a type is written in a rewrite's detail"),
    ],
    # ---------------------------------------------------------------- run
    "run.cli.x__cmd_run": [
        ({121, 124, 130}, EQ, "json.dump's ensure_ascii makes compare.json ASCII: the same bytes in any "
                              "ASCII-compatible encoding ('UTF-8' is 'utf-8')"),
        ({37, 41}, MSG, "per-node progress lines of the comparison on stderr only"),
        ({43, 60, 61, 62, 63, 64, 65, 66, 140, 141, 145}, MSG, "the text of an error line on stderr (where "
                                                               "a finding is; exit status 2 unchanged)"),
        ({147, 148, 154}, MSG, "the 'wrote FILE' lines of -v on stderr"),
    ],
    "run.hexfloat.x__hex_value": [
        ({35}, EQ, "whole and frac are never both empty here: such text was refused two lines above"),
        ({61, 62}, EQ, "at shift 0 both forms of the exactness test are the same comparison"),
        ({43, 44, 45}, MSG, "which TextError text an exponent at the edge of the range gets (refused either way)"),
    ],
    "run.hexfloat.x__float_line": [
        ({11, 12, 13, 14, 15, 16}, EQ, "parse_lines writes the bits of every NaN itself (the type's quiet NaN, "
                                       "signed from the text), so the NaN returned here only marks the place"),
    ],
    "run.hexfloat.x_parse_lines": [
        ({13}, EQ, "_float_line never reads its name argument"),
        ({27, 29}, EQ, "the values are Python floats: numpy makes float64 of them anyway"),
        ({41}, EQ, ASTYPE_NONE),
        ({30, 31, 32, 33}, MSG, "numpy's error state for the cast: at most a RuntimeWarning, the values "
                                "and the rounding check are the same"),
    ],
    "run.executor.x_run_graph": [
        ({1, 2}, EQ, "every caller passes mode: the default is never used"),
        ({5, 37}, MSG, "the text of the ValueError / RunError (still raised)"),
        ({23}, MSG, "the elapsed time a progress line shows on stderr"),
    ],
    "run.executor.x_load": [
        ({15, 27}, MSG, "the text of the RunError (still refused, exit status 2)"),
        ({40}, EQ, "for each of sonnx's element types the pinned onnx's numpy_helper.to_array already "
                   "gives sonnx's numpy type (bfloat16 as ml_dtypes' type), so the original never takes "
                   "the view; the mutant views each array as its own type: the same values"),
        ({41, 42}, EQ, "the view is never taken: for each of sonnx's element types the pinned onnx's "
                       "numpy_helper.to_array already gives sonnx's numpy type (bfloat16 as ml_dtypes' type)"),
    ],
    "conform.cli.x_add_parser": [
        ({69, 74}, EQ, "--dim's default is then None instead of []: parse_dims reads None as no --dim "
                       "(`for spec in specs or ()`)"),
        ({92}, EQ, "default=None is argparse's default"),
        (None, MSG, HELP_TEXT),
    ],
    "run.cli.x_add_parser": [
        ({113}, EQ, "default=None is argparse's default"),
        (None, MSG, HELP_TEXT),
    ],
    "run.hexfloat.x_format_array": [
        ({7}, EQ, RESHAPE), ({17}, EQ, ASTYPE_NONE), ({9}, MSG, WARN),
    ],
    "run.hexfloat.x_format_float": [
        ({15, 16}, EQ, "x is an infinity here: x > 0, x >= 0 and x > 1 agree"),
        ({37, 38}, EQ, "rstrip takes a set of characters, and a hex mantissa holds no 'X'"),
    ],
    "run.io.x__typed": [
        ({16, 17}, EQ, "a native array whose type is the declared one is then copied by astype: the same values"),
        ({25, 30, 31, 33, 34, 35, 36, 37, 38}, MSG, "the text of the InputError (still refused)"),
    ],
    "run.cli.x__progress": [(None, MSG, "when and how a progress line is written on stderr (never a result)")],
    "run.io.x__first_line": [(None, MSG, "the text of an InputError (still an InputError, exit status 2)")],
    "run.io.x__npy": [
        ({3, 5}, EQ, "allow_pickle=False is np.load's default and None is falsy like False"),
        (None, MSG, "the text of an InputError"),
    ],
    "run.io.x__npz": [
        ({3, 5}, EQ, "allow_pickle=False is np.load's default and None is falsy like False"),
        (None, MSG, "the text of an InputError"),
    ],
    "run.io.x__text": [
        ({6}, EQ, "codec names are case-insensitive: 'UTF-8-SIG' is 'utf-8-sig'"),
        ({25, 27}, EQ, "np.prod of a tuple of ints is int64 on the 64-bit platforms sonnx supports"),
        (None, MSG, "the text of an InputError"),
    ],
    "run.io.x_read_inputs": [
        ({22, 24}, EQ, "every candidate name is a prefix of the same argument followed by '=', so the "
                       "longest is also the largest string: max by value picks the same name"),
        ({36}, MSG, "an argument naming no input is refused either way: only the name or path the "
                    "InputError shows changes"),
        ({12, 60, 76, 99, 107, 119, 120}, MSG, "the text of an InputError (its 'where', or the suffix shown)"),
    ],
    "run.io.x_check_feeds": [(None, MSG, "the text of an InputError (still refused)")],
    "run.io.x__unknown": [(None, MSG, "the text of an InputError")],
    "run.io.x_write_outputs": [
        ({29, 32, 33}, EQ, "allow_pickle only matters for object arrays; a kernel never returns one"),
        ({36, 40, 45, 73, 76, 80}, EQ, "the text written is ASCII (hex floats; json.dump's ensure_ascii), "
                                       "the same bytes in any ASCII-compatible encoding"),
        ({37, 41}, OPEN, "newline=None writes os.linesep: the same '\\n' on Linux and macOS, '\\r\\n' on "
                         "Windows, where the tests do not run"),
    ],
    "run.comparison.x__ordered": [
        ({3}, EQ, "object integers give the same values as int64 for widths below 64"),
        ({25}, EQ, "negating every ordered value leaves every absolute difference the same"),
    ],
    "run.comparison.x_output_diff": [
        ({6, 10}, EQ, RESHAPE), ({36, 69}, MSG, WARN), ({40, 41}, EQ, ASTYPE_NONE),
        ({15, 20, 21, 24}, EQ, "an empty integer output: worst is 0 whatever diff holds"),
    ],
    "run.comparison.x__same": [
        ({10, 13}, EQ, RESHAPE), ({15}, MSG, WARN), ({19, 20}, EQ, ASTYPE_NONE),
        ({6}, MSG, "the text of a node's detail"),
    ],
    "run.comparison.x__session": [
        ({3, 5, 8}, MSG, "onnxruntime's own log level (its warnings on stderr), no result"),
        ({6, 9}, EQ, "without providers onnxruntime takes every available one: only CPUExecutionProvider "
                     "in the onnxruntime wheel sonnx installs"),
    ],
    "run.comparison.x_check_node": [
        ({36, 38}, MSG, "the text of a node's detail"),
        ({74}, EQ, "only the first element outside the bound is read: limit=1 only stops the search early"),
    ],
    "run.comparison.x_compare": [
        ({6, 7}, MSG, "the text of the CompareError"),
        ({20, 25, 59}, MSG, "progress lines on stderr only (none, or 'of None')"),
    ],
}

KILLS: dict[str, str] = {   # function -> the kill tests written against it
    "conform.rewrite.x__constant_tensor": "test_each_constant_form_becomes_an_initializer_of_the_same_values, "
                                          "test_a_string_constant_becomes_a_string_initializer_of_the_same_bytes, "
                                          "test_a_constant_value_is_stored_under_the_output_name",
    "conform.rewrite.x_constants_to_initializers": "test_each_constant_form_becomes_an_initializer_of_the_same_values, "
                                                   "test_only_default_domain_single_output_constants_become_initializers, "
                                                   "test_a_constant_that_stays_keeps_every_node_after_it, "
                                                   "test_before_ir_4_a_new_initializer_is_also_a_graph_input",
    "conform.rewrite.x_materialise_broadcasts": "test_the_expanded_copy_takes_a_name_nothing_else_has, "
                                                "test_nodes_skipped_or_blocked_do_not_stop_the_rewrite_of_later_ones, "
                                                "test_a_broadcast_to_a_symbolic_result_carries_the_pin_advice, "
                                                "test_a_constant_that_cannot_be_read_is_a_blocker_at_its_node, "
                                                "test_a_broadcast_is_stored_from_opset_7_whatever_the_domain_is_called",
    "conform.rewrite.x__subgraphs": "test_a_constant_still_read_in_a_subgraph_is_kept",
    "conform.rewrite.x_tidy_declarations": "test_value_info_that_agrees_is_kept_and_only_stale_entries_go, "
                                           "test_outputs_get_the_inferred_static_shape_only_where_they_declare_none_or_a_name",
    "conform.rewrite.x_parse_dims": "test_dim_sizes_from_one_to_two_to_the_31_minus_one_are_accepted",
    "conform.rewrite.x_pin_dims": "test_inputs_that_dim_cannot_pin_are_blockers_at_their_tensor",
    "conform.api.x_conform": "test_conform_uses_the_seeds_asked_for_and_records_an_unchecked_run_as_none",
    "conform.api.x_load": "test_conform_uses_the_seeds_asked_for_*, "
                          "test_external_weights_of_a_model_named_without_a_folder_are_read",
    "conform.api.x__utf8_only": "test_a_model_with_names_that_are_not_utf8_is_refused",
    "conform.rewrite.x_shapes": "test_a_shapeless_output_does_not_hide_the_shapes_after_it",
    "conform.rewrite.x__static": "test_a_result_with_a_zero_dimension_is_not_a_static_shape",
    "conform.rewrite.xǁRewriteǁas_dict": "test_a_rewrite_names_its_node_in_the_report",
    "conform.api.x__why": "test_a_blocker_explains_only_the_finding_of_its_rule_and_place",
    "conform.cli.x__summary": "test_the_summary_* (three tests)",
    "conform.cli.x__writable": "test_an_existing_output_that_cannot_be_written_is_refused",
    "conform.cli.x__cmd_conform": "test_the_report_file_is_ascii_json_indented_by_two, "
                                  "test_an_output_that_fails_to_be_written_is_exit_2_in_one_line, "
                                  "test_a_defect_inside_conform_is_exit_2_in_one_line",
    "conform.check.x_compare": "test_outputs_of_another_shape_*, test_each_differing_element_*, "
                               "test_string_and_empty_outputs_are_compared_too",
    "conform.check.x__bits": "test_string_and_empty_outputs_are_compared_too",
    "conform.check.x__hex": "test_each_differing_element_is_counted_and_the_first_is_shown_in_hex",
    "conform.check.x_bit_identity": "test_a_passed_check_counts_every_element_of_every_seed, "
                                    "test_a_check_that_cannot_be_made_is_never_passed, "
                                    "test_models_with_different_outputs_fail_the_check",
    "conform.check.x_make_input": "test_seeded_inputs_are_reproducible_and_hold_what_their_seed_promises",
    "conform.check.x__session": "test_both_models_run_unoptimised_on_one_thread_on_the_cpu",
    "conform.check.x__feeds_spec": "test_inputs_with_a_default_are_skipped_and_a_shapeless_input_cannot_be_fed, "
                                   "test_every_numpy_fed_element_type_is_fed_and_an_empty_dimension_is_not",
    "conform.check.x__edge_values": "test_the_float_edge_values_are_the_documented_ones, "
                                    "test_the_integer_edge_values_are_the_extremes_and_their_neighbours",
    "run.hexfloat.x__hex_value": "test_hex_floats_without_exponent_or_whole_digits_are_read_and_an_empty_mantissa_is_not",
    "run.hexfloat.x__float_line": "test_hex_floats_without_exponent_or_whole_digits_*",
    "run.io.x__typed": "test_raw_two_byte_values_are_refused_for_a_float16_input, "
                       "test_a_big_endian_array_of_another_type_is_refused_not_cast",
    "run.hexfloat.x_format_float": "test_infinities_are_written_as_c_writes_them",
    "run.executor.x_run_node": "test_a_legacy_broadcast_attribute_of_zero_reaches_no_kernel",
    "run.io.x_read_inputs": "test_an_npz_of_named_inputs_then_more_inputs, "
                            "test_an_npz_of_one_array_feeds_the_input_named_on_the_command_line",
    "run.io.x_describe": "test_describe_names_the_type_shape_and_digest_of_the_row_major_bytes",
    "run.io.x_sha256": "test_describe_names_the_type_shape_and_digest_of_the_row_major_bytes",
    "run.cli.x__file_sha256": "test_sonnx_run_prints_and_records_the_digests_of_its_outputs_and_model",
    "run.cli.x__cmd_run": "test_sonnx_run_prints_and_records_the_digests_of_its_outputs_and_model, "
                          "test_compare_json_is_the_comparison_record_indented_by_two, "
                          "test_outputs_that_cannot_be_written_are_exit_2_in_one_line",
    "run.io.x__npz": "test_an_object_array_in_an_input_file_is_refused_unread",
    "run.io.x__npy": "test_an_object_array_in_an_input_file_is_refused_unread",
    "run.io.x__text": "test_trailing_blank_lines_of_hex_text_are_not_values",
    "run.io.x__first_line": "test_an_exception_without_text_is_named_by_its_type",
    "run.io.x_file_stem": "test_an_output_named_run_or_starting_with_x_keeps_its_own_files",
    "run.io.x_write_outputs": "test_every_output_gets_its_npy_and_hex_inside_the_output_folder, "
                              "test_run_json_is_sorted_and_indented_by_two, "
                              "test_an_output_named_run_or_starting_with_x_keeps_its_own_files",
    "run.comparison.x_output_diff": "test_integer_outputs_are_compared_exactly_and_fully_described, "
                                    "test_float_outputs_with_nothing_to_measure_differ_by_zero, "
                                    "test_a_nan_on_one_side_does_not_poison_the_absolute_difference",
    "run.comparison.x__same": "test_integer_results_must_be_equal_exactly, test_a_result_of_another_shape_*, "
                              "test_a_nan_matches_only_a_nan_*",
    "run.comparison.x_check_node": "test_a_node_check_carries_its_index_and_name_and_integer_matmul_*",
    "run.comparison.x__node_model": "test_a_node_is_run_alone_at_the_models_opset_and_ir_version",
    "run.comparison.xǁComparisonǁas_dict": "test_the_comparison_record_has_its_four_keys",
    "run.comparison.x_compare": "test_the_comparison_keeps_its_mode_sonnxs_outputs_and_node_indices",
    "run.cli.x_add_parser": "test_both_modes_are_accepted_on_the_command_line_and_recorded, "
                            "test_compare_takes_only_onnxruntime",
    "run.cli.x__report_comparison": "test_the_comparison_report_lists_what_is_not_within_and_its_verdict",
}

# mutant -> the kill test written for it in the fourth step (2026-11-28); before KILLS
KILLS_4: dict[str, str] = {
    **{f"conform.rewrite.x_materialise_broadcasts__mutmut_{n}": t for n, t in (
        (181, "test_the_second_operand_is_materialised_after_a_first_that_is_not"),
        (211, "test_the_second_operand_is_materialised_after_a_first_of_symbolic_shape"),
        (190, "test_the_second_operand_is_blocked_after_a_first_that_fits_a_symbolic_result"),
        (232, "test_the_constant_after_one_that_cannot_be_read_is_still_materialised"),
        (157, "test_a_result_of_no_inferred_shape_is_left_alone"),
        (131, "test_a_mul_of_three_inputs_does_not_stop_the_rewrite_of_later_nodes"))},
    **{f"conform.rewrite.x_shapes__mutmut_{n}": t for n, t in (
        (9, "test_a_shape_known_by_data_propagation_is_used_to_materialise"),
        (11, "test_a_shape_known_by_data_propagation_is_used_to_materialise"),
        (10, "test_a_wrong_declaration_elsewhere_does_not_stop_the_materialisation"))},
    **{f"conform.rewrite.x_tidy_declarations__mutmut_{n}": t for n, t in (
        (10, "test_a_shape_known_by_data_propagation_is_declared_on_the_output"),
        (12, "test_a_shape_known_by_data_propagation_is_declared_on_the_output"),
        (17, "test_tidy_keeps_every_declaration_when_onnx_inference_fails"),
        (45, "test_tidy_keeps_every_declaration_when_onnx_inference_fails"),
        (86, "test_a_non_tensor_output_does_not_stop_the_declaration_of_later_outputs"))},
    **{k: "test_stale_declarations_are_removed_with_their_types_shown" for k in (
        "conform.rewrite.x__shown_type__mutmut_3", "conform.rewrite.x__type_key__mutmut_7",
        "conform.rewrite.x__type_key__mutmut_8", "conform.rewrite.x__type_key__mutmut_26")},
    "run.executor.x_load__mutmut_32": "test_a_default_domain_imported_as_ai_onnx_gives_its_opset",
    "run.executor.x_load__mutmut_33": "test_a_default_domain_imported_as_ai_onnx_gives_its_opset",
    "run.executor.x_run_graph__mutmut_30": "test_run_graph_gives_the_kernels_the_models_opset",
    "run.executor.x_run_graph__mutmut_35": "test_run_graph_gives_the_kernels_the_models_opset",
    "run.executor.x_run_node__mutmut_14": "test_run_node_gives_the_kernel_the_opset_it_is_given",
}


def _funcs(path: str) -> dict[str, list[str]]:
    src = open(path, encoding="utf-8").read()
    lines = src.splitlines()
    # from the def line on (a mutated default argument is there), the mutant's name made the same
    return {n.name: [ln.replace(n.name, "FUNCTION", 1) for ln in lines[n.lineno - 1:n.end_lineno]]
            for n in ast.walk(ast.parse(src))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and "__mutmut_" in n.name}


def _load():
    codes, diffs = {}, {}
    for meta in sorted(glob.glob("src/sonnx/*/*.py.meta")) + sorted(glob.glob("src/sonnx/*.py.meta")):
        got = json.load(open(meta))["exit_code_by_key"]
        if not any(k.startswith(("sonnx.conform.", "sonnx.run.")) for k in got):
            continue
        codes.update(got)
        funcs = _funcs(meta[:-5])
        for k, c in got.items():
            if c != 0:
                continue
            fname = k.rsplit(".", 1)[1]
            orig = funcs[fname.rsplit("__mutmut_", 1)[0] + "__mutmut_orig"]
            diffs[k] = [ln for ln in difflib.unified_diff(orig, funcs[fname], lineterm="", n=0)
                        if ln[:1] in "+-" and ln[:3] not in ("---", "+++")]
    return codes, diffs


def _tokens(line: str):
    """The tokens of one line (often part of a longer statement: an open bracket is fine)."""
    out = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(line.strip()).readline):
            if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT,
                              tokenize.DEDENT, tokenize.COMMENT):
                out.append((t.type, t.string))
    except tokenize.TokenError as exc:
        if "multi-line statement" not in str(exc):
            return None
    except (IndentationError, SyntaxError):
        return None
    return out


_BRACES = re.compile(r"\{[^{}]*\}")


def _prose(s: str) -> bool:
    """A string literal that is wording: letters and a space outside any {...} expression."""
    body = _BRACES.sub("", s.lstrip("rbfRBF").strip("'\""))
    return " " in body.strip() and bool(re.search(r"[A-Za-z]{2}", body))


def MESSAGE_RULE(diff: list[str]) -> bool:
    """One changed line, the change confined to string literals that are prose, and neither
    literal compared or used as a key: the wording of a message, help text or reason changed."""
    minus = [ln[1:] for ln in diff if ln.startswith("-")]
    plus = [ln[1:] for ln in diff if ln.startswith("+")]
    if len(minus) != 1 or len(plus) != 1:
        return False
    a, b = _tokens(minus[0]), _tokens(plus[0])
    if a is None or b is None or len(a) != len(b):
        return False
    changed = [(x, y) for x, y in zip(a, b) if x != y]
    if not changed or any(x[0] != tokenize.STRING or y[0] != tokenize.STRING for x, y in changed):
        return False
    for x, y in changed:
        if not _prose(x[1]):
            return False
        # inside {...} only None/number/slice edits (no key, attribute or call swapped)
        ex, ey = _BRACES.findall(x[1]), _BRACES.findall(y[1])
        if ex != ey and not all(u == v or "None" in v or re.sub(r"\d", "", u) == re.sub(r"\d", "", v)
                                for u, v in zip(ex, ey)):
            return False
    return True


def _split(name: str):
    m = re.match(r"sonnx\.(.+?)\.(x\w+|xǁ.+)__mutmut_(\d+)$", name)
    return f"{m.group(1)}.{m.group(2)}", int(m.group(3))


def _classify(name: str, diff: list[str]):
    func, num = _split(name)
    for nums, cat, why in CLASSES.get(func, []):
        if nums is None or num in nums:
            return cat, why
    if MESSAGE_RULE(diff):
        return MSG, "the wording of a message, help text or reason (MESSAGE_RULE)"
    return OPEN, "not analysed in the time of this run"


def _pairs(path: str) -> dict[str, str]:
    return dict(line.split() for line in open(path) if len(line.split()) == 2)


def main(recheck_path: str, dump_open: str | None = None) -> None:
    codes, diffs = _load()
    recheck = _pairs(recheck_path)
    new_kills = sorted(k for k, c in recheck.items() if codes.get(k) == 0 and c != "0")
    for k in new_kills:
        codes[k] = 1
    killed = [k for k, c in codes.items() if c in (1, 3)]
    survived = [k for k, c in codes.items() if c == 0]
    not_run = [k for k, c in codes.items() if c is None]
    other = [k for k, c in codes.items() if c not in (0, 1, 3, None)]
    rows: dict[str, list] = {}
    for k in survived:
        cat, why = _classify(k, diffs[k])
        rows.setdefault(cat, []).append((k, why))
    if dump_open:      # the open survivors with their diffs, for the reader writing CLASSES
        with open(dump_open, "w") as fh:
            for k, _ in sorted(rows.get(OPEN, [])):
                fh.write(f"== {k.removeprefix('sonnx.')}\n" + "".join(f"   {d.strip()[:200]}\n" for d in diffs[k]))
    run = len(killed) + len(survived) + len(other)
    eq = len(rows.get(EQ, []))
    p = print
    p("# Mutation testing of `src/sonnx/conform/` and `src/sonnx/run/` (issue 26)\n")
    p(HEADER.format(rechecked=len(recheck)))
    p(f"- mutants: {len(codes)}; run: {run}; **not run: {len(not_run)}**")
    p(f"- killed: {len(killed)} ({100 * len(killed) / max(1, run):.1f}% of those run), of which "
      f"{len(new_kills)} by tests/conform/test_rewrites_checks_and_reports.py and tests/run/test_files_comparison_and_opsets.py")
    p(f"- survived: {len(survived)}; other (timeout / no tests / suspicious): {len(other)}")
    p(f"- score with the {eq} equivalent survivors left out: "
      f"{100 * len(killed) / max(1, run - eq):.1f}%; counting equivalents as killed: "
      f"{100 * (len(killed) + eq) / max(1, run):.1f}%\n")
    p("| category | survivors |\n|---|---|")
    for cat in (EQ, MSG, OPEN):
        p(f"| {cat} | {len(rows.get(cat, []))} |")
    p("")
    for cat in (EQ, MSG, OPEN):
        got = rows.get(cat, [])
        if got:
            p(f"## {cat} ({len(got)})\n")
            for k, why in sorted(got):
                p(f"- `{k.removeprefix('sonnx.')}`: {why}")
            p("")
    p(f"## killed by the new tests ({len(new_kills)})\n")
    for k in new_kills:
        p(f"- `{k.removeprefix('sonnx.')}`: {KILLS_4.get(k.removeprefix('sonnx.')) or KILLS.get(_split(k)[0], 'a test of tests/conform/test_rewrites_checks_and_reports.py or tests/run/test_files_comparison_and_opsets.py')}")
    p("")
    if other:
        p(f"## other statuses ({len(other)})\n")
        p("Exit code -24 is SIGXCPU: mutmut's CPU-time limit stopped the mutant (a hang or a very slow "
          "run); mutmut counts it as a timeout, neither killed nor survived.\n")
        for k in sorted(other):
            p(f"- `{k.removeprefix('sonnx.')}`: exit code {codes[k]}")
        p("")
    if not_run:
        p(f"## not run ({len(not_run)})\n")
        by: dict[str, int] = {}
        for k in not_run:
            by[_split(k)[0]] = by.get(_split(k)[0], 0) + 1
        for f, n in sorted(by.items()):
            p(f"- `{f}`: {n}")


HEADER = (
    "Generated by `docs/mutation/classify_conform_run.py` from mutmut 3.8.1's results. The mutants "
    "were made from the code of main **9c9a1a8** (`tools/mutation-conform-run`: a copy of the "
    "committed tree, `SONNX_MUTATION_WORK=/tmp/scratch-mut/work`). Judging tests: tests/conform and "
    "tests/run without the fuzz and generated-model tests and without the tests that run "
    "`python -m sonnx` in a child process (the child imports the installed sonnx, never the "
    "mutant, so those tests cannot kill one; their in-process halves are repeated by faster "
    "tests). Status codes as mutmut reports them.\n\n"
    "How it was run (2026-11-27/28, 2 cores shared with five other sessions, load 6 to 10, `nice`, "
    "`--max-children 2`): a first mutmut run judged 2,419 mutants and was stopped for time (mutmut "
    "takes the mutants of the functions with the fastest tests first, so the slow ones were left). "
    "A second run in the same tree then ran the 1,431 it had not started, by name (`mutmut run "
    "NAME...`), with tests/conform/test_rewrites_checks_and_reports.py and tests/run/test_files_comparison_and_opsets.py as "
    "they then were in its selection, the 1,206 outside the two `add_parser` functions first; it "
    "too was stopped for time, leaving 329 mutants never started (the 225 of the two `add_parser` "
    "functions, 65 of `executor.load`, 39 of `executor.run_graph`). A third pass (2026-11-28, the "
    "same tree and test copies, `nice -n 19`, `--max-children 2`, 2 cores shared with a CI run) ran "
    "those 329 by name, all to the end, in about 15 minutes: 172 killed, 157 survived (6 of them, "
    "mutants of run's `add_parser` that let `--mode` refuse `exact` or `fast` or let `--compare` take "
    "any value, then killed by two tests added to tests/run/test_files_comparison_and_opsets.py; the 151 left "
    "are classified below: in the two `add_parser`, 128 argparse help, description or metavar text "
    "and 4 equivalent defaults; in `executor.load`/`run_graph`, 4 equivalent, 11 message text only "
    "and 4 not killed). The *not run* count below says how many mutants were never "
    "started in all (listed by function at the end; none is counted as killed or survived). "
    "The survivors were then re-checked: those of run/ against tests/run/test_files_comparison_and_opsets.py "
    "in passes while the file grew (tests were only added or tightened), the survivors of each "
    "pass again in the next, the last against the final file; those of conform/ against tests/conform/test_rewrites_checks_and_reports.py "
    "as of e87dc32 (the final file but for two later changes: a test of parse_dims, whose survivors "
    "were re-checked again against the final file, and a tighter assertion on the declare-output-shape "
    "rewrite, against which tidy_declarations 119, 131, 132, 140 and 141 were re-checked), and the 89 survivors of run/ from the third pass against the work tree's "
    "tests/run/test_files_comparison_and_opsets.py with the two new add_parser tests appended, with "
    "`docs/mutation/recheck.py` (tests collected once, each mutant in a forked child with "
    "MUTANT_UNDER_TEST set, as mutmut runs them; both files pass on the unmutated code): a "
    "mutant that file fails is counted killed below ({rechecked} survivors re-checked; the lines "
    "NAME EXIT_CODE are in docs/mutation/conform-run-recheck.txt). Categories: *equivalent* "
    "(the behaviour cannot differ, reason given), *message/help text only* (no verdict, rule, "
    "location, exit status, written value or file, or JSON structure changes), *not killed* (a "
    "real gap, or not analysed in the time of this run: the reason says which). Survivors not "
    "listed in the generator's CLASSES are classified *message* only by MESSAGE_RULE (one changed "
    "line whose change is confined to prose string literals); everything else it leaves *not "
    "killed*."
    "\n\nAfter the run, issue 26's other changes were merged (conform's reasons and Constant "
    "bits, the short text form, the no-overwrite outputs, .npy outputs with --hex on request): seven "
    "kill tests were adapted to the merged code (string Constants are now refused with a reason instead "
    "of stored; api._why takes the inferred types; cli._summary's short form and next-step line; "
    "cli._writable became sonnx.output_files.unwritable; write_outputs writes .hex only with "
    "hex_text). The figures below are those of the mutants of 9c9a1a8: the functions changed since "
    "were not mutated again."
    "\n\nA fourth step (2026-11-28) took the 32 survivors then left *not killed* one by one: 23 are "
    "killed by tests added to tests/conform/test_rewrites_checks_and_reports.py and tests/run/test_files_comparison_and_opsets.py (the kernels get the model's opset, "
    "also when it is imported as 'ai.onnx'; every operand and node of materialise_broadcasts is looked "
    "at whatever comes before it; shapes known only by onnx's data propagation; a failed inference "
    "in tidy_declarations; non-tensor and symbolic declarations shown in a removal's detail), each "
    "passing on the current code and appended to the work dir's copies, and re-checked with "
    "recheck.py (the lines appended to conform-run-recheck.txt); 7 are reclassified *equivalent* "
    "after reading the code and trying onnx's inference (materialise_broadcasts 276/277, "
    "tidy_declarations 78, 99, 103, 113, 118: the reasons say why each is unreachable); the 2 of "
    "write_outputs' newline stay *not killed*.\n")

if __name__ == "__main__":
    main(*sys.argv[1:3])
