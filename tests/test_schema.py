"""The shipped JSON Schemas (optsched.schema, ``optsched schema``) against real documents.

Every generated instance and every schedule a method returns validates; every document the loader
accepts validates (the schema is never stricter than ``from_dict``); the broken documents of
tests/data that are wrong in their JSON shape (type, missing or unknown field, version, family)
are rejected. Range and consistency errors are the loader's and verify's job.
"""

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")

from optsched import generate, get_family, solve, verify
from optsched.cli import main
from optsched.errors import OptschedError
from optsched.io import instance_from_dict, read_json, schedule_from_dict
from optsched.registry import families
from optsched.schema import FAMILIES, KINDS, UnknownSchema, schema

from tests.conftest import DATA

ROOT = Path(__file__).parent.parent
FORMATS = ROOT / "docs" / "formats.md"

#: Broken documents in tests/data/<family>/broken/ whose fault is the JSON shape.
SHAPE_BROKEN = {
    "hetero_gpu": {
        "instance": ["arrival_null", "family_list", "format_version_bool", "fractional_rounds",
                     "fractional_tasks", "gpu_name_number", "gpus_string", "job_list",
                     "jobs_object", "missing_family", "missing_weight", "model_number",
                     "name_number", "rounds_bool", "rounds_string", "sync_time_string",
                     "top_level_list", "train_time_bool", "train_time_number", "unknown_field",
                     "weight_bool", "weight_string", "wrong_version"],
        "schedule": ["bool_round", "bool_start", "bool_version", "family_list", "fractional_job",
                     "other_family", "round_fractional", "row_object", "short_row", "start_null",
                     "string_start", "tasks_object", "unknown_field"],
    },
    "edge_cloud": {
        "instance": ["arrival_fractional", "arrival_null", "cloud_string", "compute_bool",
                     "compute_string", "delay_object", "epochs_bool", "family_list",
                     "format_version_bool", "horizon_string", "job_list", "jobs_object",
                     "missing_bandwidth", "missing_jobs", "name_number", "unknown_job_field",
                     "workers_number", "workers_row_string", "wrong_version"],
        "schedule": ["end_bool", "family_list", "format_version_bool", "job_object",
                     "jobs_number", "ps_null", "run_missing_end", "run_unknown_field",
                     "start_fractional", "workers_fractional", "workers_not_pair",
                     "workers_string", "wrong_family"],
    },
    "ring_contention": {
        "instance": ["bandwidth_string", "family_list", "family_unknown", "format_version_bool",
                     "fractional_batch", "gpus_bool", "horizon_fractional", "iterations_string",
                     "job_as_list", "jobs_object", "missing_iterations", "name_number",
                     "no_family", "reduce_speed_null", "server_fractional", "servers_object",
                     "servers_string", "top_level_list", "unknown_field", "wrong_version",
                     "xi2_bool"],
        "schedule": ["family_list", "format_version_2", "format_version_bool", "jobs_object",
                     "missing_start", "placement_bool", "placement_fractional",
                     "placement_not_list", "placement_null", "start_bool", "start_fractional",
                     "start_string", "top_level_string", "unknown_field", "wrong_family"],
    },
    "elastic_cluster": {
        # no_ps_types: architecture "ps" needs PS types (the schema's if/then on architecture)
        "instance": ["bad_architecture", "chunks_fractional", "demand_string", "epochs_bool",
                     "family_list", "format_version_bool", "fractional_epochs", "jobs_object",
                     "missing_chunks", "no_ps_types", "resources_number", "unknown_field",
                     "weight_string", "wrong_version"],
        "schedule": ["duration_bool", "format_version_bool", "segments_junk", "segments_not_pair",
                     "start_fractional", "unknown_field", "workers_fractional", "wrong_family"],
    },
    "cojob_network": {
        "instance": ["bytes_string", "egress_fractional", "family_list", "flow_not_triple",
                     "flows_object", "format_version_bool", "iterations_fractional",
                     "machines_bool", "missing_flows", "stages_bool", "unknown_field",
                     "wrong_version"],
        "schedule": ["format_version_bool", "iteration_fractional", "job_index_bool", "start_bool",
                     "t1_string", "wrong_family"],
    },
}


def validator(family: str, kind: str):
    return jsonschema.Draft202012Validator(schema(family, kind))


def errors(family: str, kind: str, document) -> list[str]:
    """The schema's complaints about ``document`` (after a JSON round trip), as text."""
    data = json.loads(json.dumps(document))
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator(family, kind).iter_errors(data)]


def walk(node, path="$"):
    """Every (path, sub-schema) of a schema that describes a value."""
    yield path, node
    for key, value in node.get("properties", {}).items():
        yield from walk(value, f"{path}.{key}")
    for i, value in enumerate(node.get("prefixItems", ())):
        yield from walk(value, f"{path}[{i}]")
    if isinstance(node.get("items"), dict):
        yield from walk(node["items"], f"{path}[]")


def test_one_schema_per_registered_family_and_kind():
    assert set(FAMILIES) == set(families())
    for family in FAMILIES:
        for kind in KINDS:
            doc = schema(family, kind)
            jsonschema.Draft202012Validator.check_schema(doc)
            assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
            assert doc["properties"]["family"]["const"] == family
            assert doc["properties"]["format_version"]["const"] == 1
            assert {"family", "format_version"} <= set(doc["required"])


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("kind", KINDS)
def test_every_field_and_position_is_described(family, kind):
    for path, node in walk(schema(family, kind)):
        assert node.get("description"), f"{path} has no description"
        if node.get("type") == "object":
            assert node.get("additionalProperties") is False, f"{path} allows unknown fields"
        if "prefixItems" in node:
            assert node["items"] is False and node["minItems"] == len(node["prefixItems"]), path
            assert all(p.get("title") for p in node["prefixItems"]), f"{path}: unnamed position"


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("preset, seeds", [("tiny", (0, 1)), ("small", (0, 1)), ("paper", (0,))])
def test_generated_instances_validate(family, preset, seeds):
    for seed in seeds:  # seeds 0 and 1: elastic_cluster alternates ps / allreduce by seed
        assert errors(family, "instance", generate(family, preset, seed).to_dict()) == []


@pytest.mark.parametrize("family", FAMILIES)
def test_default_method_schedules_validate(family):
    for seed in (0, 1):
        result = solve(generate(family, "tiny", seed), get_family(family).default_method)
        assert result.schedule is not None
        assert errors(family, "schedule", result.schedule.to_dict()) == []


@pytest.mark.parametrize("family", FAMILIES)
def test_every_heuristic_schedule_validates(family):
    """Algorithms and baselines; on small seed 1 the preemptive ones use several edge_cloud runs
    and elastic_cluster segments."""
    inst = generate(family, "small", 1)
    for method in get_family(family).methods:
        if method.kind in ("algorithm", "baseline"):
            result = solve(inst, method.name, time_limit=20)
            if result.schedule is not None:
                assert errors(family, "schedule", result.schedule.to_dict()) == [], method.name


def documents(family: str):
    """Every JSON file under tests/data/<family>/, broken ones included."""
    return sorted((DATA / family).rglob("*.json"))


@pytest.mark.parametrize("family", FAMILIES)
def test_whatever_the_loader_accepts_validates(family):
    checked = 0
    for path in documents(family):
        try:
            data = read_json(path)
        except OptschedError:
            continue
        for kind, load in (("instance", instance_from_dict),
                           ("schedule", lambda d: schedule_from_dict(d, family))):
            try:
                load(data)
            except (OptschedError, TypeError):
                continue
            assert errors(family, kind, data) == [], path
            checked += 1
    assert checked >= 2


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("kind", KINDS)
def test_shape_errors_are_rejected(family, kind):
    folder = DATA / family / "broken" / ("schedules" if kind == "schedule" else "")
    check = validator(family, kind)
    accepted = [name for name in SHAPE_BROKEN[family][kind]
                if check.is_valid(json.loads((folder / f"{name}.json").read_text()))]
    assert accepted == []


def format_examples():
    """(heading, JSON blocks, text) of every section of docs/formats.md that holds JSON."""
    for section in FORMATS.read_text().split("\n## ")[1:]:
        blocks = re.findall(r"```json\n(.*?)```", section, re.S)
        if blocks:
            yield section.split("\n")[0], [json.loads(b) for b in blocks], section


def test_formats_examples_are_real_and_verified():
    """Each family's worked example: the generated instance it names, a schedule that loads,
    validates and verifies with the objective the text states."""
    seen = []
    for heading, (inst_doc, sched_doc), text in format_examples():
        family = inst_doc["family"]
        seed = int(re.search(rf"optsched generate {family} --preset tiny --seed (\d+)", text)[1])
        inst = instance_from_dict(inst_doc)
        assert heading == family and inst == generate(family, "tiny", seed)
        assert errors(family, "instance", inst_doc) == errors(family, "schedule", sched_doc) == []
        objective = verify(inst, schedule_from_dict(sched_doc, family))
        assert f"`feasible; objective {objective:.10g}`" in text
        seen.append(family)
    assert sorted(seen) == sorted(FAMILIES)


def test_schema_function_errors():
    with pytest.raises(UnknownSchema, match="unknown family 'nope'"):
        schema("nope")
    with pytest.raises(UnknownSchema, match="unknown kind 'result'"):
        schema("hetero_gpu", "result")


def test_schemas_are_package_data():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "schemas/*.json" in config["package-data"]["optsched"]
    shipped = {p.name for p in (ROOT / "optsched" / "schemas").glob("*.json")}
    assert shipped == {f"{f}.{k}.json" for f in FAMILIES for k in KINDS}


@pytest.mark.parametrize("kind", KINDS)
def test_cli_prints_the_schema(kind, capsys):
    assert main(["schema", "edge_cloud", kind]) == 0
    assert json.loads(capsys.readouterr().out) == schema("edge_cloud", kind)


def test_cli_default_kind_is_instance(capsys):
    assert main(["schema", "cojob_network"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "cojob_network instance"


@pytest.mark.parametrize("args, fragment", [
    (["schema", "nope"], "unknown family 'nope'"),
    (["schema", "hetero_gpu", "result"], "invalid choice: 'result'"),
])
def test_cli_bad_input_exits_2_with_one_line(args, fragment):
    proc = subprocess.run([sys.executable, "-m", "optsched.cli", *args], capture_output=True,
                          text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert fragment in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
