"""squall's IDL is a superset of Storm's for everything the two share: a method Storm has takes
the same argument ids and declares exactly Storm's exceptions (an extra one would read as a
normal return in a Storm client, which skips result fields it does not know), and a struct
Storm has keeps Storm's ids, names, types and required fields. Checked against both vendored
IDLs (tests/storm_idl/README.md says where they come from)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import thriftpy2

from squall import thrift_api as T

IDL_DIR = Path(__file__).resolve().parents[1] / "storm_idl"
STORM = {
    name: thriftpy2.load(str(IDL_DIR / f"{name}.thrift"), module_name=f"{name}_idl_thrift")
    for name in ("storm2", "storm1_streamparse")
}


# Where Storm 2 declares an exception Storm 1 did not, squall follows Storm 2: deleteBlob's
# IllegalStateException (Storm 2 refuses deleting a blob in use; a Storm 1 client reads it
# as a normal return, as it would from Storm 2's nimbus).
STORM2_ADDED = {("storm1_streamparse", "deleteBlob"): (3,)}


def _shape(spec: Any) -> Any:
    """A thrift_spec entry with classes replaced by their names, so two loads compare."""
    if isinstance(spec, type):
        return spec.__name__
    if isinstance(spec, tuple):
        return tuple(_shape(part) for part in spec)
    return spec


def _fields(cls: Any) -> dict[int, Any]:
    return {fid: _shape(spec) for fid, spec in cls.thrift_spec.items()}


def _structs(module: Any) -> dict[str, Any]:
    return {
        name: obj
        for name, obj in vars(module).items()
        if isinstance(obj, type) and hasattr(obj, "thrift_spec") and not name.startswith("_")
    }


@pytest.mark.parametrize("storm", sorted(STORM))
def test_shared_methods_take_storms_arguments_and_declare_exactly_its_exceptions(storm):
    theirs = STORM[storm].Nimbus
    shared = set(T.Nimbus.thrift_services) & set(theirs.thrift_services)
    assert {"submitTopology", "killTopologyWithOpts", "uploadChunk", "getTopologyInfo"} <= shared
    for method in sorted(shared):
        ours_args = _fields(getattr(T.Nimbus, method + "_args"))
        assert ours_args == _fields(getattr(theirs, method + "_args")), method
        ours_result = _fields(getattr(T.Nimbus, method + "_result"))
        for fid in STORM2_ADDED.get((storm, method), ()):
            ours_result.pop(fid)
        assert ours_result == _fields(getattr(theirs, method + "_result")), method


@pytest.mark.parametrize("storm", sorted(STORM))
def test_shared_structs_keep_storms_fields_and_fill_every_required_one(storm):
    ours, theirs = _structs(T.api), _structs(STORM[storm])
    shared = set(ours) & set(theirs)
    assert {"ExecutorStats", "NimbusSummary", "TopologyInfo", "StormTopology"} <= shared
    for name in sorted(shared):
        mine, storms = _fields(ours[name]), _fields(theirs[name])
        for fid, spec in storms.items():
            required = len(spec) > 0 and spec[-1] is True
            if fid in mine:
                assert mine[fid] == spec, f"{name}.{fid}"
            else:
                assert not required, f"{name} lacks Storm's required field {fid} ({spec[1]})"


def test_squall_only_methods_are_few_and_known():
    storm_methods = set().union(*(set(m.Nimbus.thrift_services) for m in STORM.values()))
    assert set(T.Nimbus.thrift_services) - storm_methods == {"setTopologyConf"}
