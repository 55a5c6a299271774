"""Bad config files: rubric, policy, panel, criteria, sample spec (all YAML, all user-written)."""

from __future__ import annotations

from corpus.base import FOLDER, REPO, Case, Valid, text

# ----------------------------------------------------------------------------- common YAML damage
#: (id suffix, content, expected parts): what any YAML file can be broken with
LATIN1 = "name: caf\xe9\n".encode("latin-1")
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
UTF16 = "rubric: refusal\n".encode("utf-16")


def bomb(key: str = "options") -> str:
    lines = [f"{key}:", '  l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for k in range(1, 9):
        lines.append(f"  l{k}: &l{k} [" + ",".join([f"*l{k - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def deep(levels: int = 20_000) -> str:
    return "[" * levels + "]" * levels


def yaml_damage(kind: str, name: str, what: str, args: tuple[str, ...], good: str,
                no_output: tuple[str, ...] = ()) -> list[Case]:
    """The same breakages for every YAML input: ``what`` is how the messages name the file."""
    n_good = good.count("\n")
    damage: list[tuple] = [
        ("empty", b"", ("expected a mapping",)),
        ("comment-only", b"# nothing here\n", ("expected a mapping",)),
        ("top-list", b"- rubric\n- refusal\n", ("expected a mapping",)),
        ("top-scalar", b"refusal\n", ("expected a mapping",)),
        ("latin1", LATIN1, ("not UTF-8",)),
        ("utf16", UTF16, ("not UTF-8",)),
        ("binary", PNG, ()),
        ("nul-byte", text(good).replace(b"\n", b"\n\x00", 1), ()),
        ("folder", FOLDER, ()),
        ("syntax", text(good + "oops: [unclosed\n"), ("invalid YAML",)),
        ("tab-indent", text(good + "extra:\n\tkey: 1\n"), ("invalid YAML",)),
        ("alias-bomb", text(good + bomb("zz_bomb")), ("aliases expand it",)),
        ("deep", text(good + f"zz_deep: {deep()}\n"), (f"line {n_good + 1}",)),
        ("huge-int", text(good + "zz_int: " + "9" * 5000 + "\n"),
         (f"line {n_good + 1}", "zz_int is an integer of 5,000 digits", "4,300")),
        ("huge", text(good + "# " + "x" * 2_100_000 + "\n"), ("larger than 2 MB",)),
        ("dup-top-key", text(good + good.splitlines()[0] + "\n"),
         (f"line {n_good + 1}", "appears twice", "first at line 1")),
        ("unknown-key", text(good + "colour: blue\n"), ("unknown key 'colour'",)),
        ("long-key", text(good + "k" * 1000 + ": 1\n"), ("unknown key 'kkkk", "…")),
    ]
    out = []
    for suffix, content, expect, *xfail in damage:
        # a folder is refused by click's own path check, which does not say what the file is for
        named = () if content is FOLDER else (what,)
        out.append(Case(id=f"{kind}-{suffix}", kind=kind, files={name: content}, args=args,
                        expect=(*named, *expect), no_output=no_output, xfail=xfail[0] if xfail else None))
    return out


# ----------------------------------------------------------------------------- rubric
RUBRIC = (REPO / "rubrics" / "refusal.yaml").read_text(encoding="utf-8")
RUBRIC_ARGS = ("import", "{seed}/labels.csv", "--rubric", "{case}/rubric.yaml", "--raters", "h1",
               "--store", "{store}")


def _rubric_line(prefix: str) -> int:
    return next(n for n, line in enumerate(RUBRIC.splitlines(), 1) if line.startswith(prefix))


def rubric_case(cid: str, content: str | bytes, expect: tuple[str, ...], *, xfail: str | None = None,
                extra: dict | None = None) -> Case:
    data = content if isinstance(content, bytes) else text(content)
    return Case(id=f"rubric-{cid}", kind="rubric", files={"rubric.yaml": data, **(extra or {})},
                args=RUBRIC_ARGS, expect=("Rubric file", *expect), xfail=xfail)


RUBRIC_CASES = [
    *yaml_damage("rubric", "rubric.yaml", "Rubric file", RUBRIC_ARGS, RUBRIC),
    rubric_case("two-instructions", RUBRIC + "instructions: Always answer full_compliance.\n",
                ("key 'instructions' appears twice", f"first at line {_rubric_line('instructions:')}")),
    rubric_case("version-text", RUBRIC.replace("version: 1", "version: one"), ("version",)),
    rubric_case("version-float", RUBRIC.replace("version: 1", "version: 1.5"), ("version",)),
    rubric_case("level-unknown", RUBRIC.replace("level: nominal", "level: cardinal"), ("level",)),
    rubric_case("labels-scalar", RUBRIC[: RUBRIC.index("labels:")] + "labels: full_refusal\n"
                + RUBRIC[RUBRIC.index("aliases:"):], ("labels",)),
    rubric_case("labels-empty", RUBRIC[: RUBRIC.index("labels:")] + "labels: []\n"
                + RUBRIC[RUBRIC.index("aliases:"):], ("labels",)),
    rubric_case("label-value-text", RUBRIC.replace("value: 0.5", "value: half", 1), ("labels[1].value",)),
    rubric_case("label-value-nan", RUBRIC.replace("value: 0.5", "value: .nan", 1), ("labels[1].value", "finite")),
    rubric_case("label-value-inf", RUBRIC.replace("value: 0.5", "value: -.inf", 1), ("labels[1].value", "finite")),
    rubric_case("label-code-space", RUBRIC.replace("code: partial_refusal", "code: partial refusal", 1),
                ("labels[1].code",)),
    rubric_case("label-code-twice", RUBRIC.replace("code: partial_refusal", "code: full_refusal", 1),
                ("full_refusal",)),
    rubric_case("label-no-code", RUBRIC.replace("  - code: partial_refusal\n", "  - name: partial_refusal\n", 1),
                ("labels[1]",)),
    rubric_case("alias-to-nothing", RUBRIC.replace("partial: partial_refusal", "partial: half_refusal"),
                ("alias 'partial'", "not a label code")),
    rubric_case("alias-list", RUBRIC.replace("partial: partial_refusal", "partial: [partial_refusal]"),
                ("aliases.partial",)),
    rubric_case("aliases-list", RUBRIC.replace("aliases:\n", "aliases:\n  - x\nunused:\n", 1), ("aliases",)),
    rubric_case("answer-format", RUBRIC.replace("answer_format: json", "answer_format: xml"),
                ("judge.answer_format",)),
    rubric_case("priority-text", RUBRIC + "priority_ordered: sometimes\n", ("priority_ordered",)),
    rubric_case("template-missing", RUBRIC.replace("judge:\n", "judge:\n  template: guide.txt\n", 1),
                ("judge.template", "guide.txt")),
    rubric_case("template-latin1", RUBRIC.replace("judge:\n", "judge:\n  template: guide.txt\n", 1),
                ("judge.template", "guide.txt", "UTF-8"), extra={"guide.txt": "caf\xe9\n".encode("latin-1")}),
    rubric_case("template-folder", RUBRIC.replace("judge:\n", "judge:\n  template: guide\n", 1),
                ("judge.template", "guide"), extra={"guide": FOLDER}),
    rubric_case("template-outside", RUBRIC.replace("judge:\n", "judge:\n  template: ../../../etc/passwd\n", 1),
                ("judge.template",)),
    rubric_case("deep-list-20k", RUBRIC.replace("aliases:\n", f"aliases:\n  deep: {deep()}\n", 1),
                (f"line {_rubric_line('aliases:') + 1}",)),
]

# ----------------------------------------------------------------------------- policy
POLICY = ("rubric: refusal\njudges: [j1]\nreference: final\nchecks:\n  min_items: 10\n  min_value: 0.5\n"
          "n_resamples: 100\n")
POLICY_ARGS = ("gate", "{case}/policy.yaml", "--store", "{store}", "--out", "{out}")
NO_VERDICT = ("{out}/verdict.json",)


def policy_case(cid: str, content: str, expect: tuple[str, ...], *, xfail: str | None = None) -> Case:
    return Case(id=f"policy-{cid}", kind="policy", files={"policy.yaml": text(content)}, args=POLICY_ARGS,
                expect=("Policy file", *expect), xfail=xfail, no_output=NO_VERDICT)


def with_checks(body: str) -> str:
    return POLICY.replace("  min_items: 10\n  min_value: 0.5\n", body)


POLICY_CASES = [
    *yaml_damage("policy", "policy.yaml", "Policy file", POLICY_ARGS, POLICY, NO_VERDICT),
    policy_case("two-checks-blocks", POLICY + "checks:\n  min_items: 1000\n",
                ("line 8", "key 'checks' appears twice", "first at line 4")),
    policy_case("dup-check-key", with_checks("  min_items: 10\n  min_items: 500\n"),
                ("line 5", "key 'min_items' appears twice in checks")),
    policy_case("judgs-typo", POLICY.replace("judges:", "judgs:"), ("judgs",)),
    policy_case("check-typo", with_checks("  min_itmes: 1\n"), ("checks.min_itmes",)),
    policy_case("judges-string", POLICY.replace("judges: [j1]", "judges: j1"), ("judges",)),
    policy_case("judges-empty", POLICY.replace("judges: [j1]", "judges: []"), ("judges",)),
    policy_case("judges-number", POLICY.replace("judges: [j1]", "judges: [1]"), ("judges",)),
    policy_case("judge-unknown", POLICY.replace("judges: [j1]", "judges: [ghost]"),
                ("judge 'ghost' has no ratings",)),
    policy_case("judge-is-human", POLICY.replace("judges: [j1]", "judges: [h1]"), ("judge 'h1'",)),
    policy_case("rubric-unknown", POLICY.replace("rubric: refusal", "rubric: refusl"),
                ("Rubric 'refusl' does not exist",)),
    policy_case("rubric-number", POLICY.replace("rubric: refusal", "rubric: 7"), ("rubric",)),
    policy_case("checks-missing", POLICY.replace("checks:\n  min_items: 10\n  min_value: 0.5\n", ""),
                ("checks",)),
    policy_case("checks-null", POLICY.replace("  min_items: 10\n  min_value: 0.5\n", ""), ("checks",)),
    policy_case("checks-list", with_checks("  - min_items: 1\n"), ("checks",)),
    policy_case("min-items-text", with_checks("  min_items: many\n"), ("checks.min_items",)),
    policy_case("min-items-float", with_checks("  min_items: 1.5\n"), ("checks.min_items",)),
    policy_case("min-items-zero", with_checks("  min_items: 0\n"), ("checks.min_items",)),
    # thresholds outside their statistic's range, a check that cannot fail
    policy_case("kappa-below-range", with_checks("  min_items: 10\n  min_value: -5\n"),
                ("checks.min_value", "outside the range")),
    policy_case("kappa-at-floor", with_checks("  min_items: 10\n  min_value: -1\n"),
                ("checks.min_value", "can never fail")),
    policy_case("winning-rate-zero", with_checks("  min_items: 10\n  alt_test: {min_winning_rate: 0}\n"),
                ("checks.alt_test.min_winning_rate", "can never fail")),
    policy_case("min-items-one", with_checks("  min_items: 1\n  min_value: 0.5\n"),
                ("checks.min_items", "below 5")),
    policy_case("resamples-huge", POLICY.replace("n_resamples: 100", "n_resamples: 1000000000"),
                ("n_resamples", "more than 100,000")),
    policy_case("metric-unknown", with_checks("  metric: f1\n"), ("checks.metric",)),
    policy_case("bound-text", with_checks("  min_lower_bound: high\n"), ("checks.min_lower_bound",)),
    policy_case("rate-above-one", with_checks("  max_abstention_rate: 2\n"), ("checks.max_abstention_rate",)),
    policy_case("rate-negative", with_checks("  max_error_rate: -0.1\n"), ("checks.max_error_rate",)),
    policy_case("rate-nan", with_checks("  max_error_rate: .nan\n"), ("checks.max_error_rate",)),
    policy_case("recall-scalar", with_checks("  min_class_recall: 0.5\n"), ("checks.min_class_recall",)),
    policy_case("recall-typo", with_checks("  min_class_recall: {min: 0.5, min_suport: 3}\n"),
                ("min_suport",)),
    policy_case("per-slice-no-value", with_checks("  per_slice: {min_items: 3}\n"), ("per_slice.min_value",)),
    policy_case("noise-negative", with_checks("  within_human_noise: {margin: -1}\n"),
                ("within_human_noise.margin",)),
    policy_case("resamples-few", POLICY.replace("n_resamples: 100", "n_resamples: 5"), ("n_resamples",)),
    policy_case("seed-text", POLICY + "seed: lucky\n", ("seed",)),
    policy_case("reference-unknown", POLICY.replace("reference: final", "reference: nobody"),
                ("reference 'nobody'", "fix 'reference'")),
    policy_case("reference-list", POLICY.replace("reference: final", "reference: [final]"), ("reference",)),
    policy_case("humans-unknown", POLICY + "humans: [h1, ghost]\n", ("humans names 'ghost'",)),
    policy_case("humans-judge", POLICY + "humans: [h1, j1]\n", ("humans names 'j1'",)),
    policy_case("by-unknown", POLICY + "by: [model, colour]\n", ("by names 'colour'",)),
    policy_case("by-string", POLICY + "by: model\n", ("by",)),
    policy_case("by-crossed-unknown", POLICY + "by: [model+colour]\n", ("by names 'colour'",)),
]

# ----------------------------------------------------------------------------- panel
ITEMS = "".join(
    f'{{"item_id": "p{i}", "prompt": "prompt {i}", "response": "I cannot help with {i}."}}\n'
    for i in range(3))
PANEL = ('rubric: refusal\nitems: items.jsonl\njudges:\n  - id: kw\n    model: "rules:refusal-keywords"\n')
PANEL_ARGS = ("judge", "{case}/panel.yaml", "--store", "{store}", "--no-progress")


def panel_case(cid: str, content: str, expect: tuple[str, ...], *, items: bytes | object | None = None,
               names: str | None = None, xfail: str | None = None, what: str = "Panel file") -> Case:
    files = {"panel.yaml": text(content), "items.jsonl": text(ITEMS) if items is None else items}
    return Case(id=f"panel-{cid}", kind="panel", files=files, args=PANEL_ARGS,
                expect=(what, *expect) if what else expect, names=names, xfail=xfail)


def with_judge(extra: str) -> str:
    return PANEL + extra


PANEL_CASES = [
    *[Case(id=c.id, kind=c.kind, files={**c.files, "items.jsonl": text(ITEMS)}, args=c.args,
           expect=c.expect, xfail=c.xfail)
      for c in yaml_damage("panel", "panel.yaml", "Panel file", PANEL_ARGS, PANEL)],
    panel_case("dup-model", with_judge('    model: "rules:knowledge-leak"\n'),
               ("line 6", "key 'model' appears twice in judges[0]")),
    panel_case("dup-option", with_judge("    options: {a: 1, a: 2}\n"), ("line 6", "'a' appears twice")),
    panel_case("judges-typo", PANEL.replace("judges:", "judgs:"), ("judgs",)),
    panel_case("judge-key-typo", with_judge("    temprature: 0\n"), ("judges[0].temprature",)),
    panel_case("judges-string", "rubric: refusal\nitems: items.jsonl\njudges: kw\n", ("judges",)),
    panel_case("judges-empty", "rubric: refusal\nitems: items.jsonl\njudges: []\n", ("judges",)),
    panel_case("judge-no-model", "rubric: refusal\nitems: items.jsonl\njudges:\n  - id: kw\n",
               ("judges[0].model",)),
    panel_case("trials-text", with_judge("    trials: three\n"), ("judges[0].trials",)),
    panel_case("trials-zero", with_judge("    trials: 0\n"), ("judges[0].trials",)),
    panel_case("trials-float", with_judge("    trials: 1.5\n"), ("judges[0].trials",)),
    panel_case("trials-huge", with_judge("    trials: 100000\n"), ("judges[0].trials",)),
    panel_case("concurrency-zero", with_judge("    concurrency: 0\n"), ("judges[0].concurrency",)),
    panel_case("temperature-high", with_judge("    temperature: 5\n"), ("judges[0].temperature",)),
    panel_case("temperature-nan", with_judge("    temperature: .nan\n"), ("judges[0].temperature",)),
    panel_case("timeout-negative", with_judge("    timeout_s: -1\n"), ("judges[0].timeout_s",)),
    panel_case("options-list", with_judge("    options: [1, 2]\n"), ("judges[0].options",)),
    panel_case("structured-text", with_judge("    structured: perhaps\n"), ("judges[0].structured",)),
    panel_case("id-space", PANEL.replace("id: kw", "id: k w"), ("judges[0].id", "spaces")),
    panel_case("id-reserved", PANEL.replace("id: kw", "id: 'panel:x'"), ("judges[0].id", "reserved")),
    panel_case("id-twice", with_judge('  - id: kw\n    model: "rules:knowledge-leak"\n'),
               ("judge id 'kw' is used twice",)),
    panel_case("model-unknown-kind", PANEL.replace("rules:refusal-keywords", "nosuch:thing"),
               ("'nosuch:thing': unknown kind",)),
    panel_case("model-unknown-rule", PANEL.replace("rules:refusal-keywords", "rules:nosuch"),
               ("Judge 'kw': unknown rule set 'nosuch'",)),
    panel_case("replay-missing-file", PANEL.replace("rules:refusal-keywords", "replay:nothere.csv#label"),
               ("no such file",), names="nothere.csv", what=""),
    panel_case("aggregate-unknown", with_judge('  - id: kw2\n    model: "rules:refusal-keywords"\n'
                                               "aggregate: {methods: [mean_of_votes]}\n"),
               ("aggregate", "mean_of_votes")),
    panel_case("aggregate-tie", with_judge('  - id: kw2\n    model: "rules:refusal-keywords"\n'
                                           "aggregate: {tie: coin}\n"), ("aggregate", "coin")),
    panel_case("rubric-unknown", PANEL.replace("rubric: refusal", "rubric: refusl"), ("Rubric 'refusl' does not exist",)),
    panel_case("items-number", PANEL.replace("items: items.jsonl", "items: 5"), ("items",)),
    # the items file the panel names
    panel_case("items-missing", PANEL.replace("items.jsonl", "nothere.jsonl"), ("no such file",),
               names="nothere.jsonl", what=""),
    panel_case("items-folder", PANEL, ("is a folder",), items=FOLDER, names="items.jsonl", what=""),
    panel_case("items-broken-line", PANEL, ("line 2",), items=text(ITEMS.replace('"p1"', "p1")),
               names="items.jsonl", what=""),
    panel_case("items-no-response", PANEL, ("response",),
               items=text('{"item_id": "p0", "prompt": "q"}\n'), names="items.jsonl", what=""),
    panel_case("items-no-text", PANEL, ("prompt",),
               items=text('{"item_id": "p0", "response": "r"}\n'), names="items.jsonl", what=""),
    panel_case("items-dup-id", PANEL, ("'p0' appears twice",),
               items=text(ITEMS + '{"item_id": "p0", "prompt": "x", "response": "y"}\n'),
               names="items.jsonl", what=""),
    panel_case("items-messages-text", PANEL, ("messages",),
               items=text('{"item_id": "p0", "messages": "hi", "response": "r"}\n'),
               names="items.jsonl", what=""),
    panel_case("items-messages-numbers", PANEL, ("messages",),
               items=text('{"item_id": "p0", "messages": [1, 2], "response": "r"}\n'),
               names="items.jsonl", what=""),
    panel_case("items-messages-no-role", PANEL, ("line 1", "messages[0] has no 'role'"),
               items=text('{"item_id": "p0", "messages": [{"content": "hi"}], "response": "r"}\n'),
               names="items.jsonl", what=""),
    panel_case("items-id-nul", PANEL, ("line 1", "item_id"),
               items=text('{"item_id": "p\\u0000", "prompt": "q", "response": "r"}\n'),
               names="items.jsonl", what=""),
    panel_case("items-latin1", PANEL, ("not UTF-8",), items='{"item_id": "p\xe9"}\n'.encode("latin-1"),
               names="items.jsonl", what=""),
    panel_case("items-empty", PANEL, ("empty",), items=b"", names="items.jsonl", what=""),
]

# ----------------------------------------------------------------------------- criteria
CRITERIA = ("rater: h1\ncriteria:\n  - name: refusals\n    rubric: refusal\n    label: full_refusal\n"
            '    op: "<="\n    threshold: 0.9\n')
CRITERIA_ARGS = ("analyze", "criteria", "{case}/criteria.yaml", "--store", "{store}", "--quiet")


def criteria_case(cid: str, content: str, expect: tuple[str, ...], *, xfail: str | None = None) -> Case:
    return Case(id=f"criteria-{cid}", kind="criteria", files={"criteria.yaml": text(content)},
                args=CRITERIA_ARGS, expect=("Criteria file", *expect), xfail=xfail)


CRITERIA_CASES = [
    *yaml_damage("criteria", "criteria.yaml", "Criteria file", CRITERIA_ARGS, CRITERIA),
    criteria_case("dup-max", CRITERIA + "    threshold: 0.1\n", ("line 8", "'threshold' appears twice")),
    criteria_case("threshold-typo", CRITERIA.replace("threshold:", "treshold:"), ("threshold",)),
    criteria_case("threshold-text", CRITERIA.replace("0.9", "high"), ("threshold",)),
    criteria_case("op-unknown", CRITERIA.replace('"<="', '"=<"'), ("op",)),
    criteria_case("label-unknown", CRITERIA.replace("label: full_refusal", "label: maybe"),
                  ("label 'maybe'",)),
    criteria_case("label-empty-list", CRITERIA.replace("label: full_refusal", "label: []"), ("label",)),
    criteria_case("criteria-scalar", "rater: h1\ncriteria: refusals\n", ("criteria",)),
    criteria_case("criteria-empty", "rater: h1\ncriteria: []\n", ("criteria",)),
    criteria_case("name-twice", CRITERIA + CRITERIA.split("criteria:\n")[1], ("'refusals' is used twice",)),
    criteria_case("where-nested", CRITERIA + "    where: {model: {m0: 1}}\n", ("where",)),
    criteria_case("rubric-unknown", CRITERIA.replace("rubric: refusal", "rubric: refusl"), ("refusl",)),
    criteria_case("rater-unknown", CRITERIA.replace("rater: h1", "rater: ghost"), ("ghost",)),
    criteria_case("where-unknown-column", CRITERIA + "    where: {colour: red}\n", ("colour",)),
    criteria_case("per-unknown-column", CRITERIA + "    per: colour\n", ("colour",)),
    criteria_case("min-n-zero", CRITERIA + "    min_n: 0\n", ("min_n",)),
    criteria_case("require-typo", CRITERIA + "    require: every\n", ("require",)),
]

# ----------------------------------------------------------------------------- sample spec
SPEC = "name: pilot2\nsize: 4\n"
SPEC_ARGS = ("sample", "--spec", "{case}/spec.yaml", "--store", "{store}")


def spec_case(cid: str, content: str, expect: tuple[str, ...], *, xfail: str | None = None) -> Case:
    return Case(id=f"sample-{cid}", kind="sample", files={"spec.yaml": text(content)}, args=SPEC_ARGS,
                expect=("Sample spec", *expect), xfail=xfail)


SAMPLE_CASES = [
    *yaml_damage("sample", "spec.yaml", "Sample spec", SPEC_ARGS, SPEC),
    spec_case("dup-size", SPEC + "size: 500\n", ("line 3", "'size' appears twice")),
    spec_case("size-text", SPEC.replace("size: 4", "size: four"), ("size",)),
    spec_case("size-zero", SPEC.replace("size: 4", "size: 0"), ("size",)),
    spec_case("size-float", SPEC.replace("size: 4", "size: 2.5"), ("size",)),
    spec_case("share-above-one", SPEC + "random_share: 1.5\n", ("random_share",)),
    spec_case("overlap-text", SPEC + "overlap: lots\n", ("overlap",)),
    spec_case("name-empty", SPEC.replace("name: pilot2", "name: ''"), ("name",)),
    spec_case("judges-string", SPEC + "judges: j1\n", ("judges",)),
    spec_case("strata-unknown", SPEC + "strata: [colour]\n", ("stratum column 'colour'",)),
    spec_case("rubric-unknown", SPEC + "rubric: refusl\n", ("Rubric 'refusl' does not exist",)),
    spec_case("judge-unknown", SPEC + "rubric: refusal\njudges: [ghost]\n", ("judge 'ghost' has no ratings",)),
    spec_case("seed-text", SPEC + "seed: lucky\n", ("seed",)),
    spec_case("targeted-text", SPEC + "targeted: sometimes\n", ("targeted",)),
]

CASES: list[Case] = [*RUBRIC_CASES, *POLICY_CASES, *PANEL_CASES, *CRITERIA_CASES, *SAMPLE_CASES]


# ----------------------------------------------------------------------------- a wrong type at every key


#: "wrong" values that are right there (a criterion's label may be a list of labels)
VALID_ANYWAY = {"criteria-type-criteria-0-label-list"}


#: what a refused value that pydantic's lax mode would have converted is told to be written as
NOT_TRUE, UNQUOTED, WHOLE, BOOL = ", not true", "without quotes", "without a decimal point", "write true or false"


def _wrong_values(valid) -> list[tuple[str, object, tuple[str, ...]]]:
    """(variant name, a value of the wrong type for ``valid``, what else the message says).

    The scalars of another type are refused as written, never converted (``true`` is not 1,
    ``'200'`` or ``200.0`` is not 200, ``'yes'`` or ``1`` is not true), with how to write them."""
    if isinstance(valid, bool):
        return [("text-yes", "yes", (UNQUOTED,)), ("number-1", 1, (BOOL,))]
    if isinstance(valid, int):
        return [("bool", True, (NOT_TRUE,)), ("quoted", str(valid), (UNQUOTED,)), ("float", float(valid), (WHOLE,)),
                ("list", [valid], ())]
    if isinstance(valid, float):
        return [("bool", True, (NOT_TRUE,)), ("quoted", str(valid), (UNQUOTED,)), ("mapping", {"v": valid}, ())]
    if isinstance(valid, str):
        return [("number", 5, ()), ("list", [valid], ())]
    if isinstance(valid, list):
        return [("scalar", "x", ()), ("mapping", {"a": 1}, ())]
    if isinstance(valid, dict):
        return [("list", [1, 2], ())]
    raise TypeError(valid)


def _get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def _set_path(doc, path, value):
    for p in path[:-1]:
        doc = doc[p]
    doc[path[-1]] = value


def _loc(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else ("." if out else "") + str(p)
    return out


def wrong_types(kind: str, name: str, base: dict, args: tuple[str, ...], paths: list[tuple],
                *, what: str, expect_key=_loc, extra_files: dict | None = None,
                no_output: tuple[str, ...] = ()) -> list[Case]:
    """One case per key in ``paths`` and per wrong type for its value in ``base``."""
    import copy

    import yaml

    out = []
    for path in paths:
        for variant, value, says in _wrong_values(_get(base, path)):
            doc = copy.deepcopy(base)
            _set_path(doc, path, value)
            body = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
            cid = f"{kind}-type-{_loc(path).replace('[', '-').replace(']', '').replace('.', '-')}-{variant}"
            if cid in VALID_ANYWAY:
                continue
            out.append(Case(id=cid, kind=kind, files={name: text(body), **(extra_files or {})}, args=args,
                            expect=(what, expect_key(path), *says), no_output=no_output))
    return out


POLICY_DOC = {
    "rubric": "refusal", "judges": ["j1"], "reference": "final", "humans": ["h1", "h2"], "by": ["model"],
    "checks": {"min_items": 10, "metric": "kappa", "min_value": 0.1, "min_lower_bound": -0.99,
               "max_abstention_rate": 0.5, "max_error_rate": 0.5,
               "min_class_recall": {"min": 0.1, "min_support": 1},
               "per_slice": {"min_items": 1, "min_value": -0.99}, "within_human_noise": {"margin": 1.0},
               "min_coverage": 0.5, "max_abs_bias": {"max": 0.5, "per_slice": True, "min_items": 1},
               "alt_test": {"epsilon": 0.2, "q": 0.05, "min_winning_rate": 0.01, "min_units_per_human": 2}},
    "n_resamples": 100, "seed": 0,
}
POLICY_PATHS = [("rubric",), ("judges",), ("judges", 0), ("reference",), ("humans",), ("by",), ("checks",),
                ("checks", "min_items"), ("checks", "metric"), ("checks", "min_value"),
                ("checks", "min_lower_bound"), ("checks", "max_abstention_rate"), ("checks", "max_error_rate"),
                ("checks", "min_class_recall"), ("checks", "min_class_recall", "min"),
                ("checks", "min_class_recall", "min_support"), ("checks", "per_slice", "min_items"),
                ("checks", "per_slice", "min_value"), ("checks", "within_human_noise", "margin"),
                ("checks", "min_coverage"), ("checks", "max_abs_bias"), ("checks", "max_abs_bias", "max"),
                ("checks", "max_abs_bias", "per_slice"), ("checks", "max_abs_bias", "min_items"),
                ("checks", "alt_test", "epsilon"), ("checks", "alt_test", "q"),
                ("checks", "alt_test", "min_winning_rate"), ("checks", "alt_test", "min_units_per_human"),
                ("n_resamples",), ("seed",)]

PANEL_DOC = {
    "rubric": "refusal", "items": "items.jsonl", "description": "corpus panel",
    "judges": [{"id": "kw", "model": "rules:refusal-keywords", "trials": 1, "concurrency": 2,
                "max_rpm": 600.0, "max_tpm": 100000.0, "timeout_s": 10.0, "temperature": 0.0,
                "max_tokens": 50, "structured": True, "max_attempts": 2, "backoff_s": 0.5,
                "max_backoff_s": 1.0, "price": {"input": 0.0, "output": 0.0}, "options": {},
                "batch": False, "batch_poll_s": 5.0}],
    "aggregate": {"methods": ["majority"], "tie": "abstain", "min_votes": 1},
}
PANEL_PATHS = [("rubric",), ("items",), ("description",), ("judges",), ("judges", 0), ("aggregate",),
               ("aggregate", "methods"), ("aggregate", "tie"), ("aggregate", "min_votes"),
               ("judges", 0, "price", "input")] + [
    ("judges", 0, k) for k in PANEL_DOC["judges"][0]]

RUBRIC_DOC = {
    "name": "corpus_scale", "version": 1, "title": "Corpus scale", "level": "ordinal",
    "description": "A scale for the corpus.", "instructions": "Rate it.",
    "labels": [{"code": "low", "value": 0.0, "description": "Low.", "examples": ["a"]},
               {"code": "high", "value": 1.0, "description": "High.", "examples": ["b"]}],
    "aliases": {"lo": "low"}, "priority_ordered": False, "judge": {"answer_format": "json"},
}
RUBRIC_PATHS = [("name",), ("version",), ("title",), ("level",), ("description",), ("instructions",),
                ("labels",), ("labels", 0), ("labels", 1, "code"), ("labels", 1, "value"),
                ("labels", 1, "description"), ("labels", 1, "examples"), ("aliases",), ("aliases", "lo"),
                ("priority_ordered",), ("judge",), ("judge", "answer_format")]

CRITERIA_DOC = {
    "rater": "h1", "per": "model",
    "criteria": [{"name": "refusals", "rubric": "refusal", "label": "full_refusal",
                  "where": {"model": "m0"}, "op": "<=", "threshold": 0.9, "require": "pooled", "min_n": 1}],
}
CRITERIA_PATHS = [("rater",), ("per",), ("criteria",), ("criteria", 0)] + [
    ("criteria", 0, k) for k in CRITERIA_DOC["criteria"][0]]

SAMPLE_DOC = {
    "name": "pilot2", "size": 4, "rubric": "refusal", "judges": ["j1"], "strata": ["model"],
    "min_per_stratum": 1, "random_share": 0.5, "targeted": True, "overlap": 0.25, "seed": 1,
    "exclude_rated": False,
}
SAMPLE_PATHS = [(k,) for k in SAMPLE_DOC]


def _criteria_key(path) -> str:
    return str(path[-1]) if len(path) > 2 else _loc(path)


WRONG_TYPE_CASES = [
    *wrong_types("policy", "policy.yaml", POLICY_DOC, POLICY_ARGS, POLICY_PATHS, what="Policy file",
                 no_output=NO_VERDICT),
    *wrong_types("panel", "panel.yaml", PANEL_DOC, PANEL_ARGS, PANEL_PATHS, what="Panel file",
                 extra_files={"items.jsonl": text(ITEMS)}),
    *wrong_types("rubric", "rubric.yaml", RUBRIC_DOC,
                 ("import", "{case}/r.csv", "--rubric", "{case}/rubric.yaml", "--store", "{store}"),
                 RUBRIC_PATHS, what="Rubric file",
                 extra_files={"r.csv": text("item_id,rater_id,label\nz1,ann,low\nz2,ann,high\n")}),
    *wrong_types("criteria", "criteria.yaml", CRITERIA_DOC, CRITERIA_ARGS, CRITERIA_PATHS, what="Criteria file",
                 expect_key=_criteria_key),
    *wrong_types("sample", "spec.yaml", SAMPLE_DOC, SPEC_ARGS, SAMPLE_PATHS, what="Sample spec"),
]

CASES += WRONG_TYPE_CASES


def _doc(d: dict) -> bytes:
    import yaml

    return text(yaml.safe_dump(d, sort_keys=False, allow_unicode=True))


VALID = [
    Valid("rubric", {"rubric.yaml": text(RUBRIC)}, RUBRIC_ARGS),
    Valid("rubric-doc", {"rubric.yaml": _doc(RUBRIC_DOC),
                         "r.csv": text("item_id,rater_id,label\nz1,ann,low\nz2,ann,high\n")},
          ("import", "{case}/r.csv", "--rubric", "{case}/rubric.yaml", "--store", "{store}")),
    Valid("policy", {"policy.yaml": text(POLICY)}, POLICY_ARGS),
    Valid("policy-doc", {"policy.yaml": _doc(POLICY_DOC)}, POLICY_ARGS),
    Valid("panel", {"panel.yaml": text(PANEL), "items.jsonl": text(ITEMS)}, PANEL_ARGS),
    Valid("panel-doc", {"panel.yaml": _doc(PANEL_DOC), "items.jsonl": text(ITEMS)}, PANEL_ARGS),
    Valid("criteria", {"criteria.yaml": text(CRITERIA)}, CRITERIA_ARGS),
    Valid("criteria-doc", {"criteria.yaml": _doc(CRITERIA_DOC)}, CRITERIA_ARGS),
    Valid("sample", {"spec.yaml": text(SPEC)}, SPEC_ARGS),
    Valid("sample-doc", {"spec.yaml": _doc(SAMPLE_DOC)}, SPEC_ARGS),
]
