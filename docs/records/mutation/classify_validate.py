"""Writes docs/mutation/validate.md from mutmut 3 runs over src/sonnx/validate/.

usage (in the directory where mutmut ran, with the project's venv):
    python docs/mutation/classify_validate.py RECHECK.txt [FORKED.txt] > docs/mutation/validate.md
RECHECK.txt holds lines "NAME EXIT_CODE" from running tests/validate/test_reading_walking_and_reports.py
against surviving mutants (forked, MUTANT_UNDER_TEST=NAME, as mutmut does); a nonzero code means
that file kills the mutant. FORKED.txt (optional) holds lines "NAME EXIT_CODE" for mutants mutmut
did not run, run the same way with mutmut's whole test selection (0 = survived).
Every other survivor is classified by CLASSES below: one reason per function or per group of
mutant numbers, written after reading each mutant's diff (`mutmut show NAME`)."""
from __future__ import annotations

import glob
import json
import re
import sys

EQ, MSG, TIME, ONNX, OPEN = ("equivalent", "message/help text only", "timing figures only",
                             "behind onnx's checker", "not killed")

IR_DEFAULT = ("a body is then inferred under onnx's current IR version instead of the model's; the one "
              "IR dependence of onnx's shape inference we know of is that IR < 4 types no initializer "
              "outside the graph inputs, and onnx's checker refuses such an initializer at IR < 4 "
              "(\"w in initializer but not in graph input\"), so the verdict stays 'violations'")
INFER_DEFAULT = "%s=False is onnx.shape_inference.infer_shapes' default"
TIMING = ("a figure of Report.timings (read only by benchmarks/bench_validate.py; in no report "
          "format, never a verdict, rule, location or exit status)")


# function (module.x_name, as mutmut names it) -> [(mutant numbers or None for all, category, why)]
CLASSES: dict[str, list] = {
    # ---- cli
    "cli.x_add_parser": [(None, MSG, "argparse help, description and metavar strings: --help text only")],
    "cli.x__write": [
        ({7}, EQ, "every stream written to (sys.stdout, sys.stderr, an open file) has an encoding attribute"),
        ({11}, EQ, "codec names are case-insensitive: 'UTF-8' is 'utf-8'"),
    ],
    "cli.x__cmd_validate": [
        ({10, 13}, OPEN, "open(-o FILE) with the locale's encoding instead of UTF-8: identical under the "
                         "UTF-8 locale of the test machine and CI; differs only under a non-UTF-8 locale"),
        ({17}, EQ, "codec names are case-insensitive: 'UTF-8' is 'utf-8'"),
        ({20, 21, 25, 26, 27, 35}, MSG, "the stderr message for an unwritable -o FILE (exit status 2 unchanged)"),
    ],
    # ---- reader
    "reader.x_read_bytes": [
        ({1, 7, 8, 11, 14, 17, 18, 19, 20, 21, 28, 29}, MSG,
         "the text of an Unreadable error (the model stays unreadable, exit status 2)"),
    ],
    # ---- declarations
    "declarations.xǁ_Checkerǁ_agree": [
        (set(range(22, 28)), MSG, "the advice at the end of the 'declared with different types' message"),
    ],
    "declarations.xǁ_Checkerǁ_elem_code": [
        ({6}, MSG, "an element type code that is not an ONNX type is then written 'UNDEFINED (0)' in the "
                   "message (same rule, same tensor)"),
        ({16, 17}, MSG, "the advice at the end of the element-type message"),
    ],
    "declarations.xǁ_Checkerǁ_declare": [
        ({9}, MSG, "the 'what' phrase of an element-type message"),
        ({17, 18, 20, 21}, EQ, "these also check graph inputs as declared; the walker reports every "
                               "non-static graph input at the same (graph, tensor), and api.validate "
                               "drops a declared finding there (one finding per tensor)"),
    ],
    "declarations.xǁ_Checkerǁ_external": [
        ({6, 8}, EQ, "None and '' are both falsy: 'not location' refuses either"),
        ({11, 13, 19, 20}, MSG, "the text of the ONNX-IR finding (same rule and tensor location)"),
    ],
    "declarations.xǁ_Checkerǁ_nodes": [
        ({17, 18, 19, 20, 21}, MSG, "the advice in the ref_attr_name-outside-a-function message"),
    ],
    "declarations.xǁ_Checkerǁ_graph": [
        ({22, 23, 44, 45, 49}, MSG, "the 'where' words of the disagreement / element-type messages"),
    ],
    "declarations.xǁ_Checkerǁrun": [
        ({3}, EQ, "in_function=None is falsy like False"),
        ({15, 18}, EQ, "FunctionProto has value_info in every onnx this package allows: getattr's "
                       "default is never used"),
        ({23, 31, 32}, MSG, "the 'where' word of a function value_info's message ('value_info'); the "
                            "graph-input test compares it with 'graph input', which none of these equal"),
        ({38, 39}, EQ, "on the code these mutants were made from (before the fix of _scoped, see the "
                       "header) a function's declarations reached a nested graph as 2-tuples and made "
                       "it crash; the same two mutations of the fixed code (path None, scope None) are "
                       "killed by test_a_branch_inside_a_function_redeclaring_its_tensor_is_found_in_"
                       "the_branch (checked by hand)"),
    ],
    # ---- formats
    "formats.x__title": [],
    # ---- rules
    "rules.xǁOperatorRulesǁcheck": [
        ({7}, EQ, "attrs is always a dict: an empty one sorts to () like the else branch"),
        ({10, 11}, EQ, "the memo is a cache only: with it disabled every verdict is recomputed, the same"),
    ],
    "rules.x_gemm_available": [
        (None, EQ, "sonnx.ops.gemm always imports in an installed sonnx: the except branch these "
                   "mutate never runs"),
    ],
    "rules.x_op_version": [
        ({4, 5, 6, 7}, EQ, "Mul and Gemm then take onnx.defs' since_version, which equals the profile's "
                           "table at every opset (test_op_version_agrees_with_onnx_schemas); a node in "
                           "domain 'ai.onnx' never reaches here: the checker refuses it without an "
                           "'ai.onnx' import"),
        ({17}, EQ, "no operator registered in a non-default domain shares its name with a default-domain "
                   "operator (test_no_registered_operator_shares_a_name_across_domains), so the lookup "
                   "without domain fails exactly when the one with it does"),
    ],
    # ---- text
    "text.x__clean": [
        ({13, 14}, EQ, "join(None) raises the TypeError caught just below, and 'XXXX'.join refuses "
                       "bytes like ''.join: either way the element loop that follows decides"),
    ],
    "text.x_decode": [(None, EQ, "codec names are case-insensitive: 'UTF-8' is 'utf-8'")],
    "text.x_shown_path": [(None, EQ, "codec names are case-insensitive: 'UTF-8' is 'utf-8'")],
    "text.x_path_uri": [
        ({7}, EQ, "'/' is urllib.parse.quote's default safe set"),
        ({8}, EQ, "'X' is unreserved and never quoted: safe='XX/XX' is safe='/'"),
    ],
    "text.x__escape": [
        ({3, 4}, EQ, "U+0100 (Latin A with macron, category Lu) is never escaped: _needs_escape "
                     "accepts only C*, Zl and Zp"),
        ({7, 8}, EQ, "U+10000 (Linear B syllable, category Lo) is never escaped (same reason)"),
    ],
    "walker.xǁWalkerǁ_walk_subgraph": [
        ({37}, ONNX, IR_DEFAULT),
        (set(range(4, 26)), OPEN,
         "the Loop's inputs type the untyped carried inputs of the body's copy, but that copy keeps "
         "the value_info onnx's inference of the main graph wrote into the body (for a carried "
         "tensor: the element type only, onnx's Loop inference dropping shapes that may change "
         "across iterations), and onnx's inference of the copy keeps those entries, so no type the "
         "walker reads changes (test_an_untyped_loop_body_input_is_reported_at_the_body: v2 stays "
         "of unknown rank). Dead code or a defect (typing a carried tensor from its initial value "
         "would also assume its shape never changes): left for the lead"),
    ],
    "walker.xǁWalkerǁrun": [
        ({31}, EQ, "types_known is always True: the only caller (api.validate) passes it"),
        ({9}, EQ, "graph='model' is Finding's default"),
        ({54}, EQ, "check_inputs=None is falsy like False"),
        ({65}, EQ, "the graph built for a never-called function has no inputs for check_inputs to judge"),
        ({63}, ONNX, "'and' takes the model's default-domain version instead of the function's: they "
                     "differ only when the checker refuses the model (function opset not compatible)"),
        ({15}, EQ, "require_default=None is falsy like False"),
    ],
    "walker.xǁWalkerǁ_walk_graph": [
        ({23, 32, 35, 47, 48, 167, 178, 179, 180}, MSG,
         "the 'what' phrase of a PROF-R2 message (tensor and node named by the location fields)"),
        ({99, 100, 102}, EQ, "scope.lookup searches this graph's values first (Scope(values, parent)): "
                             "skipping the direct get only costs time"),
        ({123, 124}, EQ, "the node memo is a cache only: recomputing gives the same violations"),
        ({136}, EQ, "'' and None are both falsy where ctx is read ('ctx or self._ctx(...)')"),
        ({161, 162}, EQ, "ok_ids caches entries _tensor already accepted: checking one again finds nothing"),
        ({108, 109}, EQ, "a trailing None left in the entries reads as an absent C, as trimming it "
                         "does (Mul and Gemm have no input after it)"),
        ({168}, EQ, "_tensor is given a ctx here ('ctx or self._ctx(...)' is never None) and locates "
                    "the finding by it; path is not read"),
        ({170}, EQ, "sparse_defs is touched only for a sparse tensor, and a Mul/Gemm output is never "
                    "sparse (inference types it dense)"),
        ({201, 202}, MSG, "the advice at the end of the 'is sparse' PROF-R2 message"),
        ({25}, EQ, "sparse_defs is touched only for a sparse tensor; this call is for dense initializers"),
        ({36}, EQ, "_tensor returns before reading path for a sparse tensor (it is judged later, "
                   "from sparse_defs)"),
        ({164}, EQ, "break instead of continue after an accepted output: Mul and Gemm have one output"),
        ({135}, EQ, "every entry whose id is in a memo key stays alive anyway: it is interned in the "
                    "walker's TypeCache (or is the module's _UNKNOWN_ENTRY), so no id is reused; _keep "
                    "is a second guarantee"),
        ({154}, ONNX, "e is None only for an omitted input followed by a given one: at index 0 or 1 "
                      "_op_violations returns no violation (this loop is not reached), at index 2 a 4th "
                      "input is needed, which Mul and Gemm refuse at the checker"),
        ({63}, EQ, "a graph input without a type converts to the same unknown entry as _UNKNOWN_ENTRY "
                   "(convert of an empty TypeProto is UNKNOWN)"),
    ],
    "walker.xǁWalkerǁ_tensor": [
        ({13, 21, 22, 23}, EQ, "ok_ids caches entries found static: with it unfilled or unread each "
                               "entry is checked again, with the same result"),
    ],
    "walker.xǁWalkerǁ_op_violations": [
        ({2, 3, 4, 5, 7, 8, 9, 10, 11, 12}, EQ,
         "self._gemm_ok is False only when sonnx.ops.gemm cannot be imported, never in an installed "
         "sonnx: the condition and the RuntimeError it guards are never reached"),
        ({15, 18}, ONNX, "after trailing omitted inputs are trimmed, a None at index 2 needs a 4th input: "
                         "Mul takes 2 and Gemm 3, the checker refuses more (the verdict is already "
                         "'violations'; 18 would turn that report into an error)"),
        ({31}, EQ, "opset is never None here: _walk_graph judges profile operators only when opset is not None"),
    ],

    "walker.xǁWalkerǁ_walk_call": [
        ({16}, EQ, "no scope records a tensor named '' (an omitted optional input), so lookup('') "
                   "gives None, as the else branch does"),
        ({20}, EQ, "a finer memo key (attributes kept for a function without attributes) only walks "
                   "a body again: the findings are the same"),
        ({38}, ONNX, "the recursion guard: differs only for a recursive function, which onnx's checker "
                     "refuses ('Cycle detected in model-local function references'), so the verdict "
                     "stays 'violations' (the depth guard still ends the walk)"),
    ],
    "walker.xǁWalkerǁ_walk_body": [
        ({2}, EQ, "the name of the body graph is never read: findings use the call-site path"),
        ({29}, ONNX, IR_DEFAULT),
        ({44}, EQ, "check_inputs=None is falsy like False"),
        ({22}, ONNX, "'and' takes the model's default-domain version instead of the function's: they "
                     "differ only when the checker refuses the model ('Opset import for domain in "
                     "function op ... is not compatible'), so the verdict stays 'violations'"),
    ],
    # ---- walker
    "walker.xǁWalkerǁ__init__": [
        (None, EQ, "the only caller (api.validate) passes types_known=True explicitly"),
    ],
    "walker.xǁWalkerǁ_visit": [
        ({3, 4}, EQ, "the PROF-R1 memo is a cache only: recomputing gives the same violations"),
        ({104}, MSG, "the 'what' phrase of an output's PROF-R2 message"),
        ({105}, EQ, "_tensor is given ctx here and locates the finding by it; path is not read"),
        ({118, 119, 120}, MSG, "the node label inside the 'what' phrase of an output's PROF-R2 message"),
        ({28, 29}, MSG, "the hint appended to a PROF-R1 message for a call of a model-local function"),
        ({93}, ONNX, "a Constant's attribute of type SPARSE_TENSOR not named sparse_value (or a "
                     "sparse_value of another type) is refused by the checker (Constant's schema)"),
    ],
    # ---- subinfer
    "subinfer.x_free_names": [
        (None, EQ, "the empty name (an absent optional input) has no outer type: outer_types skips "
                   "a name whose lookup gives None, so keeping it in the set changes nothing"),
    ],
    "subinfer.x_infer_body": [
        ({8, 9, 10}, EQ, "the name of the throw-away graph given to shape inference is never read back"),
        ({26}, EQ, INFER_DEFAULT % "check_type"),
        ({27}, EQ, INFER_DEFAULT % "strict_mode"),
        ({2, 3}, ONNX, IR_DEFAULT.replace("under onnx's current IR version", "under IR version 0 (2) or "
                                          "onnx's current one (3)")),
        ({32}, OPEN, "the except branch runs only when onnx's lenient inference (strict_mode=False) "
                     "raises; no body found that makes it raise, so out=None is never read"),
    ],
    "subinfer.x__names_used_and_defined": [
        ({10}, EQ, "names read only inside a graph of a GRAPHS attribute: onnx's inference never enters "
                   "such a graph (no ONNX operator has a GRAPHS attribute, custom ones have no schema), "
                   "and the walker computes that graph's own free names when it walks it"),
    ],
    "types.x_type_proto_of": [
        ({5}, EQ, "a name TensorProto lacks then gives None, which is not an int: the next line turns "
                  "it into TensorProto.UNDEFINED, as the default did"),
        ({11, 12}, EQ, "'undefined'.upper() is 'UNDEFINED', and a name TensorProto lacks falls back to "
                       "UNDEFINED too: both give TensorProto.UNDEFINED for an unknown element type"),
        ({14}, EQ, "element type names (dtypes.name_of_tensor_proto) upper-case to TensorProto enum "
                   "members, never to a non-int attribute such as DESCRIPTOR"),
        ({20}, EQ, "onnx.helper.make_tensor_type_proto writes a None dimension as unknown, as the "
                   "else branch asks"),
    ],
    "types.x_elem_name": [
        ({1}, MSG, "an UNDEFINED element type is then named 'undefined' instead of unknown: MUL-R3 / "
                   "GEMM-R3 still refuse it at the same node, with another message (checked on a Mul, "
                   "a Gemm and a call)"),
    ],
    "types.x_convert": [
        ({35, 36, 37}, EQ, "every TypeProto kind other than tensor_type and sparse_tensor_type is a key "
                           "of _NON_TENSOR (sequence, map, optional, opaque): the default is never used"),
    ],
    "walker.xǁWalkerǁ_reachable": [
        ({7}, EQ, "functions called only inside a graph of a GRAPHS attribute: onnx's inference of the "
                  "body never enters such a graph, so it never needs them"),
    ],
    "reader.x_check_and_infer": [
        ({1}, EQ, "text_ok's default is never used: the only caller (reader.load) passes it"),
        ({7}, EQ, "codec names are case-insensitive: 'UTF-8' is 'utf-8'"),
        ({29}, EQ, "the initial value of inferred is always overwritten: the try assigns it, and its "
                   "except assigns it in both of its branches"),
        ({58}, EQ, INFER_DEFAULT % "check_type"),
        ({59}, EQ, INFER_DEFAULT % "strict_mode"),
        ({45, 49, 50, 51}, MSG, "the 'what' phrase of an ONNX-INFERENCE message"),
        ({24, 25, 26, 27, 65, 66, 67, 68}, TIME, TIMING),
        ({72, 73, 74, 78}, EQ, "Loaded.inferred is read by no caller: api.validate walks every model "
                               "with types_known=True"),
        ({84}, TIME, TIMING),
    ],
    "api.x_validate": [
        ({37}, EQ, "types_known=True is Walker's default"),
        ({28, 52, 53, 54, 55}, TIME, TIMING),
    ],
    "reader.x_load": [
        ({31, 32, 33, 34, 54, 55, 56, 57}, TIME, TIMING),
        ({35}, EQ, "model is not read after this line: None only lets the ModelProto be freed early"),
        ({43}, MSG, "the model's display name in an Unreadable error's text"),
        ({61, 64}, EQ, "check_and_infer then also cleans a model whose text is all UTF-8, where "
                       "clean_model finds nothing to change"),
    ],
    "reader.x_parse": [
        ({3, 8}, MSG, "the text of an Unreadable error (the model stays unreadable, exit status 2)"),
    ],
    "reader.x_written_findings": [
        ({3}, MSG, "the model's display name in an Unreadable error's text"),
        ({8, 10}, EQ, "data only lets clean_model skip the walk of an all-ASCII model: without it "
                      "every field is walked, with the same result"),
        ({13, 15, 16, 17, 18, 29, 30, 31}, MSG, "the list of fields that are not UTF-8 shown in the "
                                            "ONNX-IR message, and its advice"),
        ({26}, EQ, "graph='model' is Finding's default"),
    ],
}


KILLS = {  # function -> the tests of tests/validate/test_reading_walking_and_reports.py written against it
    "cli.x__write": "test_write_escapes_what_the_stream_cannot_encode",
    "reader.x_read_bytes": "test_one_byte_file_is_not_called_empty, test_file_of_exactly_the_size_limit_is_read",
    "formats.x_to_text": "test_text_lists_at_most_the_limit_and_counts_the_rest, "
                         "test_text_shows_op_type_and_version_only_when_known, "
                         "test_text_goes_on_after_an_unreadable_model_and_sums_up_two",
    "formats.x__title": "test_text_groups_carry_the_requirement_title, "
                        "test_text_and_sarif_name_an_unregistered_rule_by_its_id",
    "formats.x_to_json": "test_json_and_sarif_are_indented_by_two",
    "formats.x_to_sarif": "test_json_and_sarif_are_indented_by_two",
    "formats.x__rule_descriptors": "test_text_and_sarif_name_an_unregistered_rule_by_its_id",
    "formats.x_to_sarif_obj": "test_text_and_sarif_name_an_unregistered_rule_by_its_id",
    "rules.x__gemm": "test_integer_gemm_scaled_by_attribute_is_refused, "
                     "test_integer_gemm_without_scaling_attributes_conforms, test_gemm_rules_see_the_imported_opset",
    "rules.xǁOperatorRulesǁcheck": "test_two_gemms_alike_but_for_alpha_are_judged_apart",
    "report.x_node_label": "test_unnamed_node_without_op_type_is_labelled_node",
    "walker.xǁWalkerǁ_walk_graph__207": "test_unconsumed_sparse_tensors_are_reported_where_defined",
    "walker.xǁWalkerǁ_walk_graph__211": "test_unconsumed_sparse_tensors_are_reported_where_defined",
    "walker.xǁWalkerǁ_walk_graph__213": "test_unconsumed_sparse_tensors_are_reported_where_defined",
    "walker.xǁWalkerǁ_walk_graph__214": "test_unconsumed_sparse_tensors_are_reported_where_defined",
    "walker.xǁWalkerǁ_walk_graph__215": "test_unconsumed_sparse_tensors_are_reported_where_defined",
    "walker.xǁWalkerǁ_walk_graph__216": "test_unconsumed_sparse_tensors_are_reported_where_defined",
    "walker.xǁWalkerǁ_walk_graph__217": "test_unconsumed_sparse_tensors_are_reported_where_defined",
    "walker.xǁWalkerǁ_walk_graph__218": "test_unconsumed_sparse_tensors_are_reported_where_defined",
    "walker.xǁWalkerǁ_visit__7": "tests/validate/test_reading_walking_and_reports.py run in full",
    "walker.xǁWalkerǁ_visit__8": "tests/validate/test_reading_walking_and_reports.py run in full",
    "walker.xǁWalkerǁ_walk_graph__113": "test_two_gemms_alike_but_for_alpha_are_judged_apart",
    "text.x__clean": "test_non_utf8_text_after_a_message_field_is_found, test_non_utf8_names_in_repeated_and_later_fields_are_all_listed",
    "walker.xǁWalkerǁ_walk_body__53": "test_formal_inputs_of_a_function_are_not_judged_again",
    "walker.xǁWalkerǁrun__53": "test_function_importing_the_default_domain_twice_is_found_at_the_function",
    "walker.xǁWalkerǁrun__18": "test_function_importing_no_default_domain_is_walked_at_its_call",
    "walker.xǁWalkerǁrun__19": "test_function_importing_no_default_domain_is_walked_at_its_call",
    "walker.xǁWalkerǁ_walk_graph": "test_dynamic_output_of_a_judged_mul_is_reported_at_the_node, "
                                   "test_empty_initializer_is_reported_at_its_tensor, "
                                   "test_gemm_with_c_omitted_by_an_empty_name_is_only_prof_r5",
    "walker.xǁWalkerǁ_tensor": "test_sequence_input_is_a_prof_r2_finding_at_its_tensor",
    "reader.x__onnx_finding": "test_checker_error_naming_no_node_is_located_at_the_graph",
    "rules.x_attributes": "test_integer_gemm_scaled_by_attribute_is_refused",
    "walker.xǁWalkerǁ_version": "test_each_operator_finding_carries_its_own_version_and_domain",
    "walker.xǁWalkerǁ_node_finding": "test_each_operator_finding_carries_its_own_version_and_domain, "
                                     "test_dynamic_output_of_a_judged_mul_is_reported_at_the_node",
    "subinfer.x_outer_types": "test_tensors_of_a_branch_in_a_function_are_typed_from_the_body, test_an_outer_tensor_of_unknown_type_does_not_hide_the_next_ones, test_tensors_computed_in_a_branch_from_outer_tensors_have_known_shapes",
    "subinfer.x_substitute_attributes": "test_an_attribute_reference_takes_the_calls_value_or_the_default, test_every_node_of_a_function_body_is_judged",
    "walker.xǁWalkerǁ_walk_body": "test_a_never_called_function_calling_another_is_judged_by_its_operators, test_function_importing_no_default_domain_is_walked_at_its_call",
    "walker.xǁWalkerǁ_visit": "test_a_custom_node_with_a_sparse_value_attribute_has_an_output_of_unknown_type, test_a_graphs_attribute_inside_a_branch_is_walked, test_every_graph_of_a_graphs_attribute_is_judged_at_its_own_path, "
                              "test_function_importing_no_default_domain_is_walked_at_its_call, "
                              "test_each_operator_finding_carries_its_own_version_and_domain",
    "walker.x_iter_graphs": "test_iter_graphs_yields_nested_graphs_of_both_attribute_kinds",
    "walker.xǁWalkerǁrun": "test_function_importing_the_default_domain_twice_is_found_at_the_function",
    "declarations.xǁ_Checkerǁ_external": "test_external_data_of_length_zero_is_loadable, test_external_strings_are_bounded_by_their_length_entry, test_external_data_with_location_only_is_read_from_offset_zero, "
                                         "test_external_data_without_length_must_fit_its_dims, "
                                         "test_external_location_with_backslash_parent_is_refused, "
                                         "test_external_data_of_an_in_memory_model_is_located_at_its_tensor",
    "declarations.xǁ_Checkerǁ_nodes": "test_a_graph_of_a_graphs_attribute_redeclaring_an_outer_tensor_is_found_there, test_external_tensor_of_a_constant_in_an_in_memory_model_is_located_at_its_tensor, test_external_tensors_of_a_tensors_attribute_are_located_at_their_tensor, test_attribute_reference_in_a_graphs_attribute_inside_a_function_is_allowed, test_every_graph_of_a_graphs_attribute_is_judged_at_its_own_path",
    "declarations.xǁ_Checkerǁ_declare": "test_dynamic_declared_output_and_value_info_are_reported_once_where_declared",
    "api.x_validate": "test_a_modelproto_without_graph_is_unreadable_and_named_modelproto, test_a_modelproto_is_located_as_modelproto_in_sarif, test_an_unreadable_file_is_located_by_its_raw_path_in_sarif, test_an_argument_neither_path_nor_modelproto_is_a_type_error_naming_its_type, test_a_failure_inside_the_walk_is_an_error_never_a_verdict",
    "reader.x_load": "test_a_modelproto_without_graph_is_unreadable_and_named_modelproto, test_a_modelproto_of_exactly_the_size_limit_is_read, test_an_argument_neither_path_nor_modelproto_is_a_type_error_naming_its_type, test_external_data_of_a_model_named_without_directory_is_found",
    "reader.x_written_findings": "test_findings_on_a_node_named_in_bytes_that_are_not_utf8_carry_text",
    "declarations.xǁ_Checkerǁ_graph": "test_undefined_element_types_are_located_at_their_tensor, test_external_sparse_initializer_of_an_in_memory_model_is_located_at_its_tensors, test_value_info_of_a_name_nothing_defines_is_no_finding, test_sparse_initializer_and_value_info_of_one_name_must_agree, test_a_subgraphs_own_tensor_may_reuse_an_outer_name_with_another_type",
    "declarations.xǁ_Checkerǁrun": "test_two_value_infos_of_a_function_disagreeing_are_found_at_the_function, test_undefined_element_types_are_located_at_their_tensor",
    "declarations.xǁ_Checkerǁ_elem_types": "test_undefined_element_types_inside_composite_types_are_found",
    "subinfer.x__names_used_and_defined": "test_outputs_of_a_nested_branch_typed_only_by_inference_are_known, test_a_graphs_attribute_inside_a_branch_is_walked",
    "subinfer.x_infer_body": "test_a_shape_known_by_data_propagation_in_a_function_branch_is_static, test_an_outer_tensor_of_unknown_type_does_not_hide_the_next_ones, test_a_branch_with_an_operator_onnx_cannot_infer_still_types_the_rest, test_a_branch_with_a_type_error_still_types_the_rest",
    "types.x_sparse_initializer_sig": "test_sparse_initializer_and_value_info_of_one_name_must_agree",
    "types.x_type_proto_of": "test_a_call_with_an_odd_actual_input_is_judged_not_crashed, test_a_sparse_tensor_passed_to_a_function_stays_sparse_in_its_body",
    "walker.xǁWalkerǁ_reachable": "test_a_function_called_from_a_function_body_types_what_it_returns, test_a_function_called_from_a_branch_of_a_function_body_types_what_it_returns, test_attribute_reference_in_a_graphs_attribute_inside_a_function_is_allowed",
    "walker.xǁWalkerǁ_walk_subgraph": "test_a_never_called_function_calling_another_is_judged_by_its_operators, test_an_untyped_loop_body_input_is_reported_at_the_body",
    "walker.xǁWalkerǁ_walk_call": "test_calls_are_followed_32_deep_and_no_further",
    "reader.x_check_and_infer": "test_a_shape_known_by_data_propagation_is_static, test_after_a_strict_inference_failure_the_other_tensors_keep_their_types, test_findings_on_a_node_named_in_bytes_that_are_not_utf8_carry_text",
}


def _load():
    out = {}
    for meta in sorted(glob.glob("mutants/src/sonnx/validate/*.py.meta")):
        out.update(json.load(open(meta))["exit_code_by_key"])
    return out


def _split(name: str):
    m = re.match(r"sonnx\.validate\.(\w+)\.(.+)__mutmut_(\d+)$", name)
    return f"{m.group(1)}.{m.group(2)}", int(m.group(3))


def _classify(name: str):
    func, num = _split(name)
    for nums, cat, why in CLASSES.get(func, []):
        if nums is None or num in nums:
            return cat, why
    return OPEN, "not analysed in the time of this run"


def _killer(name: str) -> str:
    func, num = _split(name)
    return KILLS.get(f"{func}__{num}", KILLS.get(func, "a test of tests/validate/test_reading_walking_and_reports.py"))


def _pairs(path: str) -> dict[str, str]:
    return dict(line.split() for line in open(path) if len(line.split()) == 2)


def main(recheck_path: str, forked_path: str | None = None) -> None:
    codes = _load()
    forked = {k: c for k, c in (_pairs(forked_path) if forked_path else {}).items() if codes.get(k, 0) is None}
    for k, c in forked.items():
        codes[k] = 0 if c == "0" else 1
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
        cat, why = _classify(k)
        rows.setdefault(cat, []).append((k, why))
    run = len(killed) + len(survived) + len(other)
    eq = len(rows.get(EQ, []))
    p = print
    p("# Mutation testing of `src/sonnx/validate/` (issue 11)\n")
    p("Generated by `docs/mutation/classify_validate.py` from mutmut 3.8.1's results "
      "(`[tool.mutmut]` of pyproject.toml: the tests of tests/validate/ without the fuzz, generated, "
      "subprocess, thousand-node and planted-fault ones). Status codes as mutmut reports them.\n")
    p("How it was run (2026-11-23, 2 shared cores, `nice`, `--max-children 2`): a first mutmut run "
      "(reusing an earlier run's results for unchanged functions) was stopped for time with 425 "
      "mutants never run (most of reader.py, api.py, types.py and part of declarations.py). A "
      "second run, in a copy of that run's tree, ran those by name (`mutmut run NAME...`), with "
      "tests/validate/test_reading_walking_and_reports.py as it then was in the selection"
      + (f"; it too was stopped for time, and the {len(forked)} mutants it had not reached were run "
         "with the same test selection by a forked runner (MUTANT_UNDER_TEST set, as mutmut does; "
         "test_reading_walking_and_reports.py first, -x)" if forked else "") + ". "
      "The survivors were then re-checked against the final tests/validate/test_reading_walking_and_reports.py "
      "(each mutant forked with MUTANT_UNDER_TEST set; the file passes on the unmutated code): a "
      "mutant that file fails is counted killed below (the lines NAME EXIT_CODE of the re-checks "
      "are in docs/mutation/validate-recheck.txt). The mutants were made from the code of main "
      "f2b7926; this branch then fixed a crash in declarations (a function's value_info redeclared "
      "in a nested graph raised ValueError: the function's declarations now reach nested graphs "
      "with their path, through `_scoped`), so the mutants of `_Checker.run` and `_Checker._graph` "
      "are those of the code before the fix, and the test of the fix "
      "(test_a_branch_inside_a_function_redeclaring_its_tensor_is_found_in_the_branch) is left out "
      "of every re-check, since it fails on that code. Categories: *equivalent* (the behaviour "
      "cannot differ, reason given), *message/help text only* (no verdict, rule ID, location, exit "
      "status or JSON/SARIF structure changes), *timing figures only* (Report.timings), *behind "
      "onnx's checker* (differs only on a model onnx's checker already refuses), *not killed* (a "
      "real gap or not understood: the reason says which).\n")
    p("The fixed code was then checked on its own: in another copy of the tree with this branch's "
      "declarations.py and final tests, `mutmut run` over the 162 mutants of `_Checker.run` and "
      "`_Checker._graph` (`_scoped` yields none) killed 156; the 6 survivors are the ones listed "
      "below under the same numbers and reasons (`_graph` 22, 23, 49: message words; `run` 3, 15, "
      "18: equivalent). The figures below are those of the code of f2b7926.\n")
    p(f"- mutants: {len(codes)}; run: {run}; **not run: {len(not_run)}**")
    p(f"- killed: {len(killed)} ({100 * len(killed) / run:.1f}% of those run), of which "
      f"{len(new_kills)} by tests/validate/test_reading_walking_and_reports.py")
    p(f"- survived: {len(survived)}; other (no tests / timeout / suspicious): {len(other)}")
    p(f"- score with the {eq} equivalent survivors left out: "
      f"{100 * len(killed) / max(1, run - eq):.1f}%; counting equivalents as killed: "
      f"{100 * (len(killed) + eq) / max(1, run):.1f}%\n")
    p("| category | survivors |\n|---|---|")
    for cat in (EQ, MSG, TIME, ONNX, OPEN):
        p(f"| {cat} | {len(rows.get(cat, []))} |")
    p("")
    for cat in (EQ, MSG, TIME, ONNX, OPEN):
        got = rows.get(cat, [])
        if not got:
            continue
        p(f"## {cat} ({len(got)})\n")
        for k, why in sorted(got):
            p(f"- `{k.removeprefix('sonnx.validate.')}`: {why}")
        p("")
    p(f"## killed by new tests ({len(new_kills)})\n")
    for k in new_kills:
        p(f"- `{k.removeprefix('sonnx.validate.')}`: {_killer(k)}")
    p("")
    if other:
        p(f"## other statuses ({len(other)})\n")
        for k in sorted(other):
            p(f"- `{k.removeprefix('sonnx.validate.')}`: exit code {codes[k]}")
        p("")
    if not_run:
        p(f"## not run ({len(not_run)})\n")
        by: dict[str, int] = {}
        for k in not_run:
            by[_split(k)[0]] = by.get(_split(k)[0], 0) + 1
        for f, n in sorted(by.items()):
            p(f"- `{f}`: {n}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
