"""Every family's exact method under the metamorphic relations of tests/metamorphic.py, driven by
the family's table of transformations (tests/models/test_<family>_metamorphic.py)."""

from __future__ import annotations

import pytest

from tests.conftest import READY
from tests.metamorphic import run
from tests.models.test_cojob_network_metamorphic import TABLE as COJOB_NETWORK
from tests.models.test_edge_cloud_metamorphic import TABLE as EDGE_CLOUD
from tests.models.test_elastic_cluster_metamorphic import TABLE as ELASTIC_CLUSTER
from tests.models.test_hetero_gpu_metamorphic import TABLE as HETERO_GPU
from tests.models.test_ring_contention_metamorphic import TABLE as RING_CONTENTION

TABLES = {t.family: t for t in (ELASTIC_CLUSTER, EDGE_CLOUD, RING_CONTENTION, COJOB_NETWORK,
                                HETERO_GPU)}
#: The two longest of the default run (~53 and ~36 s; stop 28's suite was at 10:10): slow tier.
SLOW = {"hetero_gpu-relabelling", "hetero_gpu-scaling"}
PROPERTIES = [pytest.param(t, relations, id=name,
                           marks=[pytest.mark.slow] if name in SLOW else [])
              for t in TABLES.values() for relations in t.properties
              for name in [f"{t.family}-{'+'.join(relations)}"]]


def test_every_family_has_a_table():
    assert sorted(TABLES) == sorted(READY)


@pytest.mark.parametrize("table, relations", PROPERTIES)
def test_exact_metamorphic(table, relations):
    run(table, relations)
