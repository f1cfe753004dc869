#!/usr/bin/env python3
"""Record OpenRLHF's whole actor update window at its releases: numbers and provenance only.

For every release in RELEASES this script reads the release's files out of a local bare git
repository of OpenRLHF/OpenRLHF (``git --git-dir=<dir> show <commit>:<path>``, in memory),
checks each file's SHA-256 against the constants below, parses them with ``ast``, picks the
needed definitions / methods, checks their free global names against the namespace of
documented stand-ins, and ``exec``s exactly those nodes with real ``torch``. It then runs
seeded float64 batches through upstream's own ``ActorPPOTrainer.ppo_train`` (which calls the
release's ``training_step`` once per micro-batch) with a stand-in ``self`` and writes only
numbers plus provenance to ``test/fixtures/frameworks/openrlhf-releases.json``.

The args namespace is built by upstream's own argparse block (the ``parser.add_argument``
calls of the release's openrlhf/cli/train_ppo_ray.py, run against the real ``argparse``), then
``hierarchize`` (openrlhf/utils/config.py, v0.10.2 on) and the release's
``eps_clip_low_high`` fallback statement. ``PolicyLoss`` is built by the release's own
``self.actor_loss_fn = PolicyLoss(...)`` statement picked from ``ActorPPOTrainer.__init__``.

Usage (see tools/record-fixtures/README-openrlhf-releases.md):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/openrlhfReleases.py \
        --openrlhf-git /work/.mirror/OpenRLHF+OpenRLHF/repo

Output: JSON, indent=1, sorted keys, trailing newline, byte-stable across re-runs.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import dataclasses
import hashlib
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import types
import zlib
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple


sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "record-releases"))
from compact import load_expanded as load_facts  # noqa: E402  - the compact release facts, expanded
# The git, reading and ast-picking helpers are verlReleases.py's (the same code, kept in one place).
from verlReleases import (  # noqa: E402
    free_names,
    git,
    node_name,
    pick_closure,
    pick_method,
    read_release,
    top_level,
)

TOOL_PATH = "tools/record-fixtures/openrlhfReleases.py"
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "test" / "fixtures" / "frameworks" / "openrlhf-releases.json"
BUILTIN_BATCH_FILE = REPO_ROOT / "test" / "fixtures" / "polgrad" / "which_example.json"
FACTS_FILE = "src/conformance/releases/data/openrlhf.json"

# --------------------------------------------------------------------------------------
# Pinned upstream identity (labels and commits as in src/conformance/releases/data/openrlhf.json)
# --------------------------------------------------------------------------------------

CLI = "openrlhf/cli/train_ppo_ray.py"
ACTOR = "openrlhf/trainer/ray/ppo_actor.py"
LOSS = "openrlhf/models/loss.py"
MUTILS = "openrlhf/models/utils.py"
KLC = "openrlhf/trainer/ppo_utils/kl_controller.py"
DS = "openrlhf/utils/deepspeed/deepspeed.py"
CONFIG = "openrlhf/utils/config.py"
LOSS_UTILS = "openrlhf/utils/loss_utils.py"


@dataclasses.dataclass(frozen=True)
class Release:
    label: str
    tag: Optional[str]
    commit: str
    files: dict  # path -> sha256 of the whole file at `commit`


RELEASES = (
    Release("v0.8.4", "v0.8.4", "c3faa20c13dc29a3e2522e5bd00507f844245944", {
        CLI: "32e830931965f5a30cff5e3cf601b06827a6b65feae3570783ef3b2437fa3db0",
        ACTOR: "d7ca2fe15deccea552f0ada90a6cf592bcdc775f70c540c8c4a13b695280c039",
        LOSS: "d338fd3fe9775b2ed95c980d28a889da9b535a33e4a421d2970d423d7b3955c0",
        MUTILS: "d5c4005853e829f2b99f98b481f89efbac9c7c6534bde2e5e4eec76dce3b2fd7",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "7ab602beaed49970a8ec53da9909c10fac7a71563fabf072b5a10691ca7b8a19",
    }),
    Release("v0.8.5", "v0.8.5", "5974dfe8bded77e90dcdb92f08f3bdba31972ff2", {
        CLI: "145b87d85741fe608cebe0b7ab09b7e5f9ec96c4cfb0a5935ee37de92fbdb6b6",
        ACTOR: "37cc712ca6ffa943166eaeb489a5f10cd6b2dd8e158761950a0acddaa3ed11eb",
        LOSS: "d338fd3fe9775b2ed95c980d28a889da9b535a33e4a421d2970d423d7b3955c0",
        MUTILS: "d5c4005853e829f2b99f98b481f89efbac9c7c6534bde2e5e4eec76dce3b2fd7",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "7ab602beaed49970a8ec53da9909c10fac7a71563fabf072b5a10691ca7b8a19",
    }),
    Release("v0.8.6", "v0.8.6", "f9a1676b4dc7de489fe34ac75c67edf2bcbbf2fc", {
        CLI: "6b36b53f6a3181948ea975ce1ffe56a109b36ed4a2aa47eaecf776b493cb2b78",
        ACTOR: "4135a5d7b8dc73ae742fb6e91ffd2e12e271de1b3cb3b1f77d2a0ab20c7ed0e7",
        LOSS: "26d2cebc2852f524bc4b6e15cd7950fa763c0edb07de420beb7746df188b9666",
        MUTILS: "37c5ad01a787ec5579cfff23a85f720d2bd03581fc3789a490f8b8ecc6f069bc",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "8c12b0b6c1fc4f2c96700c54d6e9fbafdd61ee0b13b58a6f2f99addcb686cbf4",
    }),
    Release("v0.8.7", "v0.8.7", "2fbe8cbc3e5ac06faafc904ad2cda5404ec8f4b6", {
        CLI: "5aa6760cbb339fa8d7222081d610c9f977bb85ef273c6f2c7f35b8fc10187822",
        ACTOR: "4135a5d7b8dc73ae742fb6e91ffd2e12e271de1b3cb3b1f77d2a0ab20c7ed0e7",
        LOSS: "26d2cebc2852f524bc4b6e15cd7950fa763c0edb07de420beb7746df188b9666",
        MUTILS: "37c5ad01a787ec5579cfff23a85f720d2bd03581fc3789a490f8b8ecc6f069bc",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "8c12b0b6c1fc4f2c96700c54d6e9fbafdd61ee0b13b58a6f2f99addcb686cbf4",
    }),
    Release("v0.8.8", "v0.8.8", "6eb5724f8e98603d321432c6f207ffc2e3b8455d", {
        CLI: "88928590e61e94bafaac58b11d6592cebbd1ba6371abc6a2d867cda3d7d3d70a",
        ACTOR: "80e285d4a2a2c40752afc8445e595cebc1b016bc57c48db9e02931d40fe74278",
        LOSS: "c50e318ae543463890858d1fca5253350c41da46adc51749605682bdff3efc35",
        MUTILS: "37c5ad01a787ec5579cfff23a85f720d2bd03581fc3789a490f8b8ecc6f069bc",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "8c12b0b6c1fc4f2c96700c54d6e9fbafdd61ee0b13b58a6f2f99addcb686cbf4",
    }),
    Release("v0.8.9", "v0.8.9", "3c99cb9c036c2f249d9ad4b0a926321c53b31e9b", {
        CLI: "6d8aa1c312a4c907525601a1d12dd2e11136fa5512812f6d6f604af6a8937682",
        ACTOR: "1f9c70206aa936d689d6a5aa5c5802cdc4f6e0d16e3185c7eb8baa2199ae4f5c",
        LOSS: "e1e770e3993d2168973dce9b5150160c14e98a7003889cbb6283069cd0e9bb8d",
        MUTILS: "37c5ad01a787ec5579cfff23a85f720d2bd03581fc3789a490f8b8ecc6f069bc",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "8c12b0b6c1fc4f2c96700c54d6e9fbafdd61ee0b13b58a6f2f99addcb686cbf4",
    }),
    Release("v0.8.9.post1", "v0.8.9.post1", "9423758979d177e0deddbbd7380a70549de6b877", {
        CLI: "6d8aa1c312a4c907525601a1d12dd2e11136fa5512812f6d6f604af6a8937682",
        ACTOR: "1f9c70206aa936d689d6a5aa5c5802cdc4f6e0d16e3185c7eb8baa2199ae4f5c",
        LOSS: "e1e770e3993d2168973dce9b5150160c14e98a7003889cbb6283069cd0e9bb8d",
        MUTILS: "37c5ad01a787ec5579cfff23a85f720d2bd03581fc3789a490f8b8ecc6f069bc",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "8c12b0b6c1fc4f2c96700c54d6e9fbafdd61ee0b13b58a6f2f99addcb686cbf4",
    }),
    Release("v0.8.10", "v0.8.10", "f8ec7ca6b5424f6d637d84a461477748e2cb2e03", {
        CLI: "ee4267ad503c0bf869fb80915c5afbee138bceb264c5d6381cd3cf2caf1a5e64",
        ACTOR: "e35750bd47ec2308c962fb33d3f44794a05f5e29636b5c60a7a656836a870900",
        LOSS: "172b0cce181df8a5e3719a01608c6fb876dd3b7bc0e45ce8bb17aef04e75728a",
        MUTILS: "37c5ad01a787ec5579cfff23a85f720d2bd03581fc3789a490f8b8ecc6f069bc",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "8c12b0b6c1fc4f2c96700c54d6e9fbafdd61ee0b13b58a6f2f99addcb686cbf4",
    }),
    Release("v0.8.11", "v0.8.11", "ac3689ece2666cb524836568b88bfc6016dabc6f", {
        CLI: "ee4267ad503c0bf869fb80915c5afbee138bceb264c5d6381cd3cf2caf1a5e64",
        ACTOR: "e35750bd47ec2308c962fb33d3f44794a05f5e29636b5c60a7a656836a870900",
        LOSS: "172b0cce181df8a5e3719a01608c6fb876dd3b7bc0e45ce8bb17aef04e75728a",
        MUTILS: "37c5ad01a787ec5579cfff23a85f720d2bd03581fc3789a490f8b8ecc6f069bc",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "8c12b0b6c1fc4f2c96700c54d6e9fbafdd61ee0b13b58a6f2f99addcb686cbf4",
    }),
    Release("v0.9.0", "v0.9.0", "06ab51e75c0e8c5b4d6b66912996b2a611e3dc2f", {
        CLI: "7fc178eb292fb28719ea3a70be3299469b531a79671960b6616ab56b0b41a4d2",
        ACTOR: "e35750bd47ec2308c962fb33d3f44794a05f5e29636b5c60a7a656836a870900",
        LOSS: "172b0cce181df8a5e3719a01608c6fb876dd3b7bc0e45ce8bb17aef04e75728a",
        MUTILS: "37c5ad01a787ec5579cfff23a85f720d2bd03581fc3789a490f8b8ecc6f069bc",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "f6c330217f50ac63c8d98c9c2900d1fca12c9e75ccb89933966fb25a72be4b16",
    }),
    Release("v0.9.1", "v0.9.1", "ac18582b815b51073d13ae54ba7e5c7a67658067", {
        CLI: "0906e44796651f091b26c53ea64e22e57b4f4c379b6f4e22125947a780b3401b",
        ACTOR: "e671997654edfce0ca42ac32b5a8d49dfe6de6bd1e6d8857c64a6c5316a8e9a3",
        LOSS: "f49ba89756d9d958b42c06e2b23e5ddc20ac2e01b3d51b9be495518b05cb2739",
        MUTILS: "37c5ad01a787ec5579cfff23a85f720d2bd03581fc3789a490f8b8ecc6f069bc",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "f6c330217f50ac63c8d98c9c2900d1fca12c9e75ccb89933966fb25a72be4b16",
    }),
    Release("v0.9.1.post1", "v0.9.1.post1", "f2f971fdff6f534dbc4df53cce43ef8da27eecd6", {
        CLI: "0906e44796651f091b26c53ea64e22e57b4f4c379b6f4e22125947a780b3401b",
        ACTOR: "e671997654edfce0ca42ac32b5a8d49dfe6de6bd1e6d8857c64a6c5316a8e9a3",
        LOSS: "f49ba89756d9d958b42c06e2b23e5ddc20ac2e01b3d51b9be495518b05cb2739",
        MUTILS: "37c5ad01a787ec5579cfff23a85f720d2bd03581fc3789a490f8b8ecc6f069bc",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "f6c330217f50ac63c8d98c9c2900d1fca12c9e75ccb89933966fb25a72be4b16",
    }),
    Release("v0.9.2", "v0.9.2", "7026caaf2e34d5d10947725c7393ce18619e6dd3", {
        CLI: "aa1da2448efe91eeefc0923efde7e8c740b28c544cebea7a1ed9e61ad281dc1c",
        ACTOR: "04d2b05ff0269255b3e7c37ac6eb6c5625edb405329a784d0b84d4209010465e",
        LOSS: "f49ba89756d9d958b42c06e2b23e5ddc20ac2e01b3d51b9be495518b05cb2739",
        MUTILS: "37c5ad01a787ec5579cfff23a85f720d2bd03581fc3789a490f8b8ecc6f069bc",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "748ae63b26026fb4c6d731882b4f231e507cf41a877dcbd39a907058efc3a3c0",
    }),
    Release("v0.9.3", "v0.9.3", "8b78539c0e159e2271e7a98f87f59dbeabb3f0c9", {
        CLI: "071e15e84e0fd9e07d2680ba2a04ba58dd35fc2d1054f76e22fe7ee5358148c7",
        ACTOR: "460f5d92f4bb8f03f80f42a82e6b881a5b621a45cb8631d1596a98476cc68cd6",
        LOSS: "fc3e22d9ac0b0695301347443277caf46abe0ea79716ca1e8b02e2af8c7bdb2e",
        MUTILS: "37c5ad01a787ec5579cfff23a85f720d2bd03581fc3789a490f8b8ecc6f069bc",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "748ae63b26026fb4c6d731882b4f231e507cf41a877dcbd39a907058efc3a3c0",
    }),
    Release("v0.9.4", "v0.9.4", "4477f52cdeed699467ccedb2496782acebd36f47", {
        CLI: "a6b8dbfb7242fcaa6c2705166dfd41eac8e52c476a99f3e476398c76fd59df74",
        ACTOR: "460f5d92f4bb8f03f80f42a82e6b881a5b621a45cb8631d1596a98476cc68cd6",
        LOSS: "c105f01bbd77102e47a73857883edf4a1a4698a547c537ab874cb6ea3c6ee7c2",
        MUTILS: "37c5ad01a787ec5579cfff23a85f720d2bd03581fc3789a490f8b8ecc6f069bc",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "b497c29ad0b1c522cb33d1ce2d0cadc03f23779f068e4e854b8dfdedc9885b54",
    }),
    Release("v0.9.5", "v0.9.5", "c0e2ee2473cd115863630599cc3d51917d4b7c3e", {
        CLI: "a6b8dbfb7242fcaa6c2705166dfd41eac8e52c476a99f3e476398c76fd59df74",
        ACTOR: "04d1e780a0b045bf5b7f8ea2b72b3998d29893f2299956613faf4e1b52ea656e",
        LOSS: "c105f01bbd77102e47a73857883edf4a1a4698a547c537ab874cb6ea3c6ee7c2",
        MUTILS: "37c5ad01a787ec5579cfff23a85f720d2bd03581fc3789a490f8b8ecc6f069bc",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "b497c29ad0b1c522cb33d1ce2d0cadc03f23779f068e4e854b8dfdedc9885b54",
    }),
    Release("v0.9.6", "v0.9.6", "4908e6ee3caba79fce8aa53e7f5aa78a2fc81873", {
        CLI: "a6b8dbfb7242fcaa6c2705166dfd41eac8e52c476a99f3e476398c76fd59df74",
        ACTOR: "c6f2a2da0394383c64c3cfe3932ece8ee402119b8a634823734495e9285647bf",
        LOSS: "6e30bc94f4b59a0fca2ef9791efdb39f95a6707dded47bb4bc8b649d24a37201",
        MUTILS: "0ab6a123521bc8c1731aac400df81befd0af3ac65d3c7d13add5d4cdfc2ecfa3",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "b3aa68bf7d52580b3e844f6beca5160248d97e679785de841ee3ccb6d604ae39",
    }),
    Release("v0.9.7", "v0.9.7", "7c54c8397e507b0c36af326c2a26a2555ddad927", {
        CLI: "b43873232e0fafb4b408e50c95d9c4afd4ccf8ae7ae1f73da101214b35b9507c",
        ACTOR: "c6f2a2da0394383c64c3cfe3932ece8ee402119b8a634823734495e9285647bf",
        LOSS: "6e30bc94f4b59a0fca2ef9791efdb39f95a6707dded47bb4bc8b649d24a37201",
        MUTILS: "0ab6a123521bc8c1731aac400df81befd0af3ac65d3c7d13add5d4cdfc2ecfa3",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "b3aa68bf7d52580b3e844f6beca5160248d97e679785de841ee3ccb6d604ae39",
    }),
    Release("v0.9.8", "v0.9.8", "9c5d2600263a7a2b48784e1dd508f5e53ced5cea", {
        CLI: "5859b95adf57ee49c9987fc0888d5a13a19eb8bedefb1fb59d28f9dd1d36fa90",
        ACTOR: "c9c689605a88fef02a1db97589e83507cd4ce1d8e1c8f716efc54e1de5521748",
        LOSS: "6e30bc94f4b59a0fca2ef9791efdb39f95a6707dded47bb4bc8b649d24a37201",
        MUTILS: "0ab6a123521bc8c1731aac400df81befd0af3ac65d3c7d13add5d4cdfc2ecfa3",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "b3aa68bf7d52580b3e844f6beca5160248d97e679785de841ee3ccb6d604ae39",
    }),
    Release("v0.9.9", "v0.9.9", "3e438ab59a2542cdc476eed2f44f14fc6e2d6283", {
        CLI: "6ed8ca0d01a56ca3d2759f9f4123de1de5ecff34c04877d235e8225591a69c24",
        ACTOR: "b58e7de5d331ade6ace62db73ae1aa6e866fd87f250a9930a84f037c6cf2bbec",
        LOSS: "6e30bc94f4b59a0fca2ef9791efdb39f95a6707dded47bb4bc8b649d24a37201",
        MUTILS: "adb6d37458d7aeb6df0645acb632c175d47f2da6040136a597f52687f083be0b",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "4036bd31681ec6eb0c4936385599e6a4af3675e0c8fc2842b2b7e65b105c3398",
    }),
    Release("v0.9.10", "v0.9.10", "6f58d4183dfa2ff2de396f856350ed4aca395645", {
        CLI: "d5a09d4ed8a9ff49f2eb14c14138116c2c7121efa89d86701338059bda1e02ae",
        ACTOR: "b58e7de5d331ade6ace62db73ae1aa6e866fd87f250a9930a84f037c6cf2bbec",
        LOSS: "6e30bc94f4b59a0fca2ef9791efdb39f95a6707dded47bb4bc8b649d24a37201",
        MUTILS: "adb6d37458d7aeb6df0645acb632c175d47f2da6040136a597f52687f083be0b",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "9f608bd6cc07140a166395ac9572d23ed8c4679222eb6be9a825eb5e051d7efe",
    }),
    Release("v0.10.0", "v0.10.0", "48406a0b8a6da6199c8ad00c11a74685f0b7e6ad", {
        CLI: "edff47e96b9ad2b7f3f42a308c9aa0b21cbd62688f6e1a308a072e50e9ab1e69",
        ACTOR: "abc9238065f882a96e83cadcae9ec18ea61cc42c23e44400e1722d5d55a5bb4d",
        LOSS: "6e30bc94f4b59a0fca2ef9791efdb39f95a6707dded47bb4bc8b649d24a37201",
        MUTILS: "adb6d37458d7aeb6df0645acb632c175d47f2da6040136a597f52687f083be0b",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "9f608bd6cc07140a166395ac9572d23ed8c4679222eb6be9a825eb5e051d7efe",
    }),
    Release("v0.10.1", "v0.10.1", "33f9d72fbac7ada09979fd0873c27b1cca0cc0e1", {
        CLI: "c788d8e3c880d9bb49cfdb0e8af57d7893f71060bf17c1acc286663c7fe2518b",
        ACTOR: "abc9238065f882a96e83cadcae9ec18ea61cc42c23e44400e1722d5d55a5bb4d",
        LOSS: "6e30bc94f4b59a0fca2ef9791efdb39f95a6707dded47bb4bc8b649d24a37201",
        MUTILS: "adb6d37458d7aeb6df0645acb632c175d47f2da6040136a597f52687f083be0b",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "9f608bd6cc07140a166395ac9572d23ed8c4679222eb6be9a825eb5e051d7efe",
    }),
    Release("v0.10.1.post1", "v0.10.1.post1", "e261d311b9f092090d4d4e632f5c709d41a2e38c", {
        CLI: "c788d8e3c880d9bb49cfdb0e8af57d7893f71060bf17c1acc286663c7fe2518b",
        ACTOR: "abc9238065f882a96e83cadcae9ec18ea61cc42c23e44400e1722d5d55a5bb4d",
        LOSS: "6e30bc94f4b59a0fca2ef9791efdb39f95a6707dded47bb4bc8b649d24a37201",
        MUTILS: "adb6d37458d7aeb6df0645acb632c175d47f2da6040136a597f52687f083be0b",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "9f608bd6cc07140a166395ac9572d23ed8c4679222eb6be9a825eb5e051d7efe",
    }),
    Release("v0.10.1.post2", "v0.10.1.post2", "ff481ecdc97b861c0cbf07ce49284969a1bd9878", {
        CLI: "c788d8e3c880d9bb49cfdb0e8af57d7893f71060bf17c1acc286663c7fe2518b",
        ACTOR: "abc9238065f882a96e83cadcae9ec18ea61cc42c23e44400e1722d5d55a5bb4d",
        LOSS: "6e30bc94f4b59a0fca2ef9791efdb39f95a6707dded47bb4bc8b649d24a37201",
        MUTILS: "adb6d37458d7aeb6df0645acb632c175d47f2da6040136a597f52687f083be0b",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "9f608bd6cc07140a166395ac9572d23ed8c4679222eb6be9a825eb5e051d7efe",
    }),
    Release("v0.10.2", "v0.10.2", "64c1cc4f30d4c0dab772c8aa1dc11288c425e0da", {
        CLI: "6af5f217a2809553765025f291a1badcd94bb712fde31ae866005121e8cbc523",
        ACTOR: "33bffcd8644c7eaf8aa2c7acc0a7edb0686c0ef458a852c1b7fa3e9d1a7d5c10",
        LOSS: "6e30bc94f4b59a0fca2ef9791efdb39f95a6707dded47bb4bc8b649d24a37201",
        MUTILS: "adb6d37458d7aeb6df0645acb632c175d47f2da6040136a597f52687f083be0b",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "bcc6bfe7f7a1eff303b8c8c1727bcf4d220497ca57c6fb60287e0ee40241386b",
        CONFIG: "b08e5bc8052aca00aaa69e3e5c97a0773a0e5d96150c3093999f3a99170c94e5",
    }),
    Release("v0.10.3", "v0.10.3", "3a9815c51aa7e985983eacd06504aaf6db0bbe6b", {
        CLI: "6af5f217a2809553765025f291a1badcd94bb712fde31ae866005121e8cbc523",
        ACTOR: "4c63c61197259966fc3c26d9680981a8389321cb484ea644737078aad4daf6fe",
        LOSS: "9fb33b3112233908bb66b89e8f8800ca97e80efdeeb86c3887f5ccfb22eddbe0",
        MUTILS: "adb6d37458d7aeb6df0645acb632c175d47f2da6040136a597f52687f083be0b",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "bcc6bfe7f7a1eff303b8c8c1727bcf4d220497ca57c6fb60287e0ee40241386b",
        CONFIG: "b08e5bc8052aca00aaa69e3e5c97a0773a0e5d96150c3093999f3a99170c94e5",
        LOSS_UTILS: "229b7b0f71046a3ebf58f117241f97856170716142e97bb3ae5ec1f1f0848e6b",
    }),
    Release("v0.10.4", "v0.10.4", "ad1796e62b56bc9deae95542778336f88d24a3ed", {
        CLI: "c1b93dc4e90d19a608306435be75deb5a843737714a7889b001d58c473108e2c",
        ACTOR: "70d9039f2347988c8988997ea814dc5811bf52ed8b4419f01cc62723402d4fbe",
        LOSS: "d1dea3b37cb4c647a1a4b2472fbaefb025ac7ffb50688408d33af4c66a957551",
        MUTILS: "adb6d37458d7aeb6df0645acb632c175d47f2da6040136a597f52687f083be0b",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "d36a5397247d6eec5157b06df7c556e0f5cdc67aeda019bc1545eea4e7583192",
        CONFIG: "b08e5bc8052aca00aaa69e3e5c97a0773a0e5d96150c3093999f3a99170c94e5",
        LOSS_UTILS: "e92296afa70862aa5d5ce3aea8085f29b5d9ef1b097ec03dc79b922b66c5f2e7",
    }),
    Release("bc71bb19", None, "bc71bb19464aca306b33080b2d2bb45d154e2f49", {
        CLI: "658dd36d9f116531e75a003a07c609b7dba1f467c983e68585ea7c634a669656",
        ACTOR: "70d9039f2347988c8988997ea814dc5811bf52ed8b4419f01cc62723402d4fbe",
        LOSS: "d1dea3b37cb4c647a1a4b2472fbaefb025ac7ffb50688408d33af4c66a957551",
        MUTILS: "afea248aa7bb2fb09d3eebce9d582cb98a8f904425ba1698c2ee38ca46e8dcb1",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "d36a5397247d6eec5157b06df7c556e0f5cdc67aeda019bc1545eea4e7583192",
        CONFIG: "b08e5bc8052aca00aaa69e3e5c97a0773a0e5d96150c3093999f3a99170c94e5",
        LOSS_UTILS: "e92296afa70862aa5d5ce3aea8085f29b5d9ef1b097ec03dc79b922b66c5f2e7",
    }),
    Release("v0.11.0", "v0.11.0", "3c3be6234e0cb353e76bb8019947db9dfe99fca7", {
        CLI: "be2812dd766660083a08ee05bfb4a72731ed6afc91885ad959ee871140b70aa8",
        ACTOR: "5db627c1506ca23106522096c40fefd7aca7cd6535fc4ba34f5bc288c9dc6c6d",
        LOSS: "21e97ce9a023663ac12f67df165e3d8cccb3ffc358c4765b5daf6fc02bd941a1",
        MUTILS: "afea248aa7bb2fb09d3eebce9d582cb98a8f904425ba1698c2ee38ca46e8dcb1",
        KLC: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        DS: "7eedb0961fba10d29c12fa1f11389b56418ae698535577a0023b366c0c875449",
        CONFIG: "b08e5bc8052aca00aaa69e3e5c97a0773a0e5d96150c3093999f3a99170c94e5",
        LOSS_UTILS: "e92296afa70862aa5d5ce3aea8085f29b5d9ef1b097ec03dc79b922b66c5f2e7",
    }),
)

FLAT_UNTIL = "v0.10.1.post2"  # last release whose flags are flat (--eps_clip ...); dotted from v0.10.2

# Per-era extra cases (coverage item 3) and full per-flag cases (coverage item 2).
ERA_RELEASES = ("v0.8.4", "v0.8.9", "v0.8.10", "v0.9.1", "v0.9.4", "v0.10.0", "v0.10.1", "v0.10.2", "v0.10.3",
                "v0.10.4")
FULL_RELEASES = ("v0.11.0", "bc71bb19")

# Spelling-neutral flag names -> (flat spelling, dotted spelling from v0.10.2)
FLAGS = {
    "eps_clip": ("--eps_clip", "--actor.eps_clip"),
    "eps_clip_low_high": ("--eps_clip_low_high", "--actor.eps_clip_low_high"),
    "dual_clip": ("--dual_clip", "--actor.dual_clip"),
    "policy_loss_type": ("--policy_loss_type", "--actor.policy_loss_type"),
    "use_kl_loss": ("--use_kl_loss", "--algo.kl.use_loss"),
    "init_kl_coef": ("--init_kl_coef", "--algo.kl.init_coef"),
    "kl_estimator": ("--kl_estimator", "--algo.kl.estimator"),
    "entropy_loss_coef": ("--entropy_loss_coef", "--actor.entropy_coef"),
    "enable_vllm_is_correction": ("--enable_vllm_is_correction", "--algo.advantage.is_correction_enable"),
    "vllm_is_truncated_threshold": ("--vllm_is_truncated_threshold", "--algo.advantage.is_correction_threshold"),
    "vllm_is_correction_type": ("--vllm_is_correction_type", "--algo.advantage.is_correction_type"),
    "micro_train_batch_size": ("--micro_train_batch_size", "--train.micro_batch_size"),
    "train_batch_size": ("--train_batch_size", "--train.batch_size"),
    "use_dynamic_batch": ("--use_dynamic_batch", "--train.dynamic_batch_enable"),
}

IS_THRESHOLD = [0.97, 1.03]  # IS threshold pair used by the IS cases (v0.9.1 on); v0.8.9 / v0.8.10 take one float
IS_THRESHOLD_SINGLE = 1.03

SKIPPED = (
    "use_dynamic_batch / --train.dynamic_batch_enable: not recorded. It replaces the fixed "
    "micro_train_batch_size split by token-budget micro-batches built by the replay buffer "
    "(setup_dynamic_batch: packing by --train_max_tokens_per_gpu, reordering, "
    "dynamic_loss_scale / dynamic_sample_loss_scale per micro-batch and dynamic_optimizer_step "
    "boundaries), forces --packing_samples (which asserts vLLM engines) and sets DeepSpeed's "
    "gradient_accumulation_steps to 1; on a fixed batch its loss is a different window "
    "normalisation, but reproducing it needs the replay buffer's balancing code, which is not "
    "picked. v0.9.3's vllm_is_correction_type 'mis' is not recorded (not asked). aux_loss "
    "(MoE) needs model output, not recorded. Random batches with an empty row are recorded "
    "only at v0.11.0 / bc71bb19 (and there only where empty rows matter). Optimizer-side "
    "gradient clipping (max_norm) and the optimizer step itself are not applied; EMA is off."
)

# --------------------------------------------------------------------------------------
# Reading pinned sources from git
# --------------------------------------------------------------------------------------


def check_facts_file() -> None:
    """Labels / tags / commits must equal those of the facts file (the TypeScript side's release list)."""
    facts = load_facts(REPO_ROOT / FACTS_FILE)
    got = [(r["label"], r["tag"], r["commit"]) for r in facts["releases"]]
    want = [(r.label, r.tag, r.commit) for r in RELEASES]
    if got != want:
        raise SystemExit(f"{FACTS_FILE} lists releases {got}, the recorder pins {want}")


# --------------------------------------------------------------------------------------
# Picking definitions and executing only those
# --------------------------------------------------------------------------------------


def exec_nodes(nodes: list[ast.stmt], namespace: dict[str, Any], filename: str) -> None:
    missing = sorted(free_names(nodes) - set(namespace))
    if missing:
        raise SystemExit(f"{filename}: picked definitions read names with no binding: {missing}")
    module = ast.Module(body=list(nodes), type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, filename, "exec")
    exec(code, namespace)  # noqa: S102 - the point of this tool: run pinned, hash-checked upstream code


def wrap_function(name: str, args: list[str], body: list[ast.stmt], returns: Optional[str]) -> ast.FunctionDef:
    """A synthetic ``def name(*args): <picked statements>; return <returns>`` around picked statements."""
    stmts = list(body)
    if returns is not None:
        stmts.append(ast.Return(value=ast.Name(id=returns, ctx=ast.Load())))
    fn = ast.FunctionDef(name=name, args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=a) for a in args],
                                                          vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                                                          defaults=[]),
                         body=stmts, decorator_list=[], returns=None, type_comment=None, lineno=stmts[0].lineno,
                         col_offset=0)
    last = body[-1]
    fn.end_lineno = last.end_lineno
    fn.end_col_offset = 0
    if returns is not None:
        ast.copy_location(stmts[-1], last)
        ast.copy_location(stmts[-1].value, last)
    return fn


def line_of(source: str, node: ast.AST, needle: str) -> Optional[int]:
    lines = source.splitlines()
    for i in range(node.lineno - 1, node.end_lineno):
        if needle in lines[i]:
            return i + 1
    return None


# --------------------------------------------------------------------------------------
# Stand-ins
# --------------------------------------------------------------------------------------

torch: Any = None  # set in main()


class StandInError(RuntimeError):
    """Raised by a stand-in: the recorder does not model what upstream asked for (never recorded as upstream)."""


class Forbidden:
    """An attribute holder whose unknown attributes raise: upstream reading one is a recorder bug."""

    def __init__(self, what: str, **values: Any) -> None:
        object.__setattr__(self, "_what", what)
        self.__dict__.update(values)

    def __getattr__(self, name: str) -> Any:
        raise StandInError(f"upstream read {self._what}.{name}, which the recorder does not provide")


class ActorOutput:
    def __init__(self, entropy: Any) -> None:
        self.entropy = entropy

    def __getattr__(self, name: str) -> Any:
        raise StandInError(f"upstream read actor output .{name}")


class ActorStandIn:
    """Stand-in for openrlhf.models.Actor: forward returns rows of one float64 leaf tensor of log-probs."""

    KNOWN_KW = {"attention_mask", "return_output", "ring_attn_group", "packed_seq_lens", "return_entropy"}

    def __init__(self, lp_leaf: Any, entropies: Any, calls: list) -> None:
        self.lp_leaf = lp_leaf
        self.entropies = entropies
        self.calls = calls

    def train(self) -> None:
        pass

    def __call__(self, sequences: Any, action_mask: Any = None, **kwargs: Any) -> Any:
        extra = set(kwargs) - self.KNOWN_KW
        if extra:
            raise StandInError(f"actor called with {sorted(extra)}")
        if kwargs.get("ring_attn_group") is not None or kwargs.get("packed_seq_lens") is not None:
            raise StandInError("ring attention / packing is not modelled")
        idx = sequences[:, 0]
        self.calls.append([int(i) for i in idx])
        log_probs = self.lp_leaf.index_select(0, idx)
        entropy = None
        if kwargs.get("return_entropy"):
            if self.entropies is None:
                raise StandInError("this case needs an entropies stream")
            entropy = self.entropies.index_select(0, idx)
        if not kwargs.get("return_output"):
            return log_probs
        return log_probs, ActorOutput(entropy)


class StrategyStandIn:
    """Stand-in for openrlhf.utils.deepspeed.DeepspeedStrategy on one rank (world size 1).

    backward(loss, model, optim) is DeepSpeed engine.backward: with gradient_accumulation_steps
    (= accumulated_gradient) > 1 the loss is divided by it (scale_wrt_gas) before
    loss.backward(). optimizer_step records the accumulated leaf gradient at every
    accumulation boundary (DeepSpeed only steps there)."""

    def __init__(self, gas: int, lp_leaf: Any) -> None:
        self.accumulated_gradient = gas
        self.ring_attn_group = None
        self.lp_leaf = lp_leaf
        self.backward_losses: list[float] = []
        self.steps: list[Any] = []

    def is_rank_0(self) -> bool:
        return True

    def all_reduce(self, data: Any, op: str = "mean") -> Any:
        del op
        return data  # one rank: every all-reduce is the identity

    def backward(self, loss: Any, model: Any, optimizer: Any, **kwargs: Any) -> None:
        del model, optimizer, kwargs
        if self.accumulated_gradient > 1:
            loss = loss / self.accumulated_gradient
        self.backward_losses.append(float(loss.detach().item()))
        loss.backward()

    def optimizer_step(self, optimizer: Any, model: Any, scheduler: Any, name: str = "model", **kwargs: Any) -> None:
        del optimizer, model, scheduler, name, kwargs
        if len(self.backward_losses) % self.accumulated_gradient == 0:
            grad = self.lp_leaf.grad
            self.steps.append(None if grad is None else grad.detach().clone())

    def moving_average(self, *args: Any, **kwargs: Any) -> None:
        raise StandInError("EMA is not modelled")

    def get_grad_norm(self, model: Any) -> float:
        del model
        return 0.0  # metrics only


class SchedulerStandIn:
    def get_last_lr(self) -> list[float]:
        return [0.0]  # metrics only


class TqdmStandIn:
    """Stand-in for tqdm.tqdm: iterates the wrapped iterable; set_postfix is a no-op."""

    def __init__(self, iterable: Any, desc: str = "", disable: bool = False, **kwargs: Any) -> None:
        del desc, disable, kwargs
        self.iterable = iterable

    def __iter__(self) -> Any:
        return iter(self.iterable)

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        pass


class DataLoaderStandIn:
    """Stand-in for torch.utils.data.DataLoader over the replay buffer: contiguous batches of
    batch_size items IN ORDER (shuffle is ignored: the recorder fixes the order), drop_last
    honoured, each batch passed through collate_fn."""

    def __init__(self, dataset: Any, batch_size: int = 1, shuffle: bool = False, drop_last: bool = False,
                 pin_memory: bool = False, collate_fn: Optional[Callable] = None) -> None:
        del pin_memory
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle_requested = shuffle
        self.drop_last = drop_last
        self.collate_fn = collate_fn
        dataset.loaders.append(self)

    def __iter__(self) -> Any:
        n = len(self.dataset)
        for start in range(0, n, self.batch_size):
            items = [self.dataset[i] for i in range(start, min(start + self.batch_size, n))]
            if len(items) < self.batch_size and self.drop_last:
                return
            yield self.collate_fn(items)


@dataclasses.dataclass
class Experience:
    """Stand-in for openrlhf.trainer.ppo_utils.experience(_maker).Experience (the fields training_step reads)."""

    sequences: Any = None
    attention_mask: Any = None
    action_mask: Any = None
    action_log_probs: Any = None
    base_action_log_probs: Any = None
    advantages: Any = None
    rollout_log_probs: Any = None
    info: Any = None

    def to_device(self, device: Any) -> None:
        del device

    @staticmethod
    def is_episode_tensor_field(name: str) -> bool:
        del name
        return False  # metrics only: no episode tensor is logged


class ReplayBufferStandIn:
    """Stand-in for NaiveReplayBuffer: holds the batch's rows; collate_fn stacks a list of rows."""

    def __init__(self, b: dict, sample_batch_size: int) -> None:
        self.b = b
        self.sample_batch_size = sample_batch_size
        self.loaders: list = []

    def __len__(self) -> int:
        return self.b["lp"].shape[0]

    def __getitem__(self, i: int) -> int:
        return i

    def collate_fn(self, rows: list[int]) -> Experience:
        b = self.b
        idx = torch.tensor(rows, dtype=torch.int64)
        mask = b["mask_long"].index_select(0, idx)
        lengths = mask.sum(-1).to(torch.float32)
        info = {  # metric-only fields the experience maker puts in info (read by ppo_train's logging)
            "kl": torch.zeros(len(rows)), "reward": torch.zeros(len(rows)), "return": torch.zeros(len(rows)),
            "response_length": lengths, "total_length": lengths,
        }
        return Experience(
            sequences=idx[:, None], attention_mask=torch.ones(len(rows), 1, dtype=torch.int64), action_mask=mask,
            action_log_probs=b["old"].index_select(0, idx), base_action_log_probs=b["ref"].index_select(0, idx),
            advantages=b["adv"].index_select(0, idx),
            rollout_log_probs=None if b["rollout"] is None else b["rollout"].index_select(0, idx), info=info,
        )

    def setup_dynamic_batch(self, strategy: Any) -> None:
        raise StandInError("dynamic batch is not recorded")

    def __getattr__(self, name: str) -> Any:
        raise StandInError(f"upstream read replay_buffer.{name}")


class CpuCuda:
    """torch.cuda stand-in inside ppo_train: current_device() is 'cpu' (experience.to_device is a no-op)."""

    @staticmethod
    def current_device() -> str:
        return "cpu"

    @staticmethod
    def is_available() -> bool:
        return False


class TorchForPpoTrain(types.ModuleType):
    """Real torch, except torch.cuda (see CpuCuda); only given to ppo_train."""

    def __init__(self) -> None:
        super().__init__("torch")
        self.cuda = CpuCuda()

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)


class FixedDatetime:
    """Stand-in for datetime.datetime in the argparse block (only a logging run-name default reads it)."""

    @staticmethod
    def now() -> Any:
        import datetime as _dt  # noqa: PLC0415

        return _dt.datetime(2000, 1, 1)


def merge_mm_train_inputs_standin(*args: Any, **kwargs: Any) -> Any:
    raise StandInError("multimodal inputs are not modelled")


STUBS = (
    "Only picked upstream definitions run; nothing of OpenRLHF is imported. Picked and "
    "executed with real torch: masked_mean and compute_approx_kl (openrlhf/models/utils.py), "
    "PolicyLoss (+ aggregate_loss from v0.10.3) (openrlhf/models/loss.py, with real torch.nn / "
    "torch.nn.functional / torch.distributed), FixedKLController (kl_controller.py), "
    "hierarchize (openrlhf/utils/config.py, v0.10.2+), get_loss_batch_info (+ "
    "iter_grad_accum_global_norm and helpers from v0.10.4) (openrlhf/utils/loss_utils.py, "
    "v0.10.3+; torch.distributed is not initialised, so dp_size 1 and no all-reduce), and from "
    "openrlhf/trainer/ray/ppo_actor.py the methods ActorPPOTrainer.ppo_train and "
    "ActorPPOTrainer.training_step plus the statements of ActorPPOTrainer.__init__ that set "
    "self.max_epochs, self.actor_loss_fn (= PolicyLoss(...) from the args) and self.aux_loss. "
    "The args namespace comes from the release's own argparse block (the statements of "
    "train_ppo_ray.py's __main__ block before parse_args, run with the real argparse module; "
    "parse_args gets the case's flags), then hierarchize (v0.10.2+), then the release's "
    "'if args[.actor].eps_clip_low_high is None' statement; then train_batch_size "
    "(--train.batch_size) is set to the batch's B (one window). kl_ctl = "
    "FixedKLController(init_kl_coef).value (ppo_trainer builds FixedKLController when "
    "kl_target is None, the default, and passes kl_ctl.value to fit -> ppo_train). Stand-ins "
    "(not upstream): self.actor is called as the Actor (sequences = row ids [rows, 1]) and "
    "returns rows of one float64 leaf tensor of log-probs and, when return_entropy, an output "
    "whose .entropy holds the batch's entropies rows; actor.train() is a no-op. self.strategy "
    "is a one-rank DeepSpeed strategy: accumulated_gradient = train_batch_size // "
    "micro_train_batch_size (the formula of openrlhf/utils/deepspeed/deepspeed.py with world "
    "size, ring attention and tensor parallel sizes 1); backward(loss) is DeepSpeed's "
    "engine.backward: loss / gradient_accumulation_steps when that is > 1, then "
    "loss.backward(); optimizer_step records the leaf gradient at each accumulation "
    "boundary; all_reduce is the identity; is_rank_0 True; ring_attn_group None; "
    "get_grad_norm 0.0 (metrics). DataLoader yields contiguous micro-batches of "
    "replay_buffer.sample_batch_size (= micro_train_batch_size) rows in row order (shuffle "
    "ignored), drop_last honoured; the replay buffer's collate_fn stacks rows into an "
    "Experience stand-in (dataclass with sequences, attention_mask, action_mask int64, "
    "action_log_probs = old, base_action_log_probs = ref, advantages [rows, T], "
    "rollout_log_probs, info with metric-only zero / length tensors for kl, reward, return, "
    "response_length, total_length); tqdm iterates; torch.cuda.current_device() returns "
    "'cpu' inside ppo_train; actor_scheduler.get_last_lr() = [0.0]; ema_model None; "
    "Experience.is_episode_tensor_field False (metrics only); merge_mm_train_inputs raises "
    "(never called: the actor stand-in has no is_vlm). In the argparse block, datetime is a "
    "stand-in whose now() is 2000-01-01 (it only feeds the default of a logging run-name flag)."
)


# --------------------------------------------------------------------------------------
# Loading one release
# --------------------------------------------------------------------------------------


@dataclasses.dataclass
class Loaded:
    rel: Release
    sources: dict
    build_parser: Callable
    hierarchize: Optional[Callable]
    eps_fallback: Callable
    init_subset: Callable
    ppo_train: Callable
    training_step: Callable
    fixed_kl: type
    picked: list
    dotted: bool
    nodes: dict  # name -> ast node (for rules text)


def parse(sources: dict, rel: Release, path: str) -> tuple[ast.Module, str]:
    name = f"OpenRLHF/OpenRLHF@{rel.commit[:8]}/{path}"
    return ast.parse(sources[path], filename=name), name


def load_release(rel: Release, sources: dict) -> Loaded:
    import torch.distributed as dist  # noqa: PLC0415
    import torch.nn as nn  # noqa: PLC0415
    import torch.nn.functional as F  # noqa: PLC0415, N812

    picked: list[str] = []
    nodes: dict[str, Any] = {}

    # ---- openrlhf/models/utils.py
    mu_tree, mu_name = parse(sources, rel, MUTILS)
    mu_nodes = pick_closure(mu_tree, ["masked_mean", "compute_approx_kl"], mu_name)
    mu_ns: dict[str, Any] = {"__name__": "openrlhf.models.utils", "torch": torch, "Optional": Optional}
    exec_nodes(mu_nodes, mu_ns, mu_name)
    picked += [f"{MUTILS}:{node_name(n)}" for n in mu_nodes]
    nodes["compute_approx_kl"] = top_level(mu_tree, mu_name)["compute_approx_kl"]

    # ---- openrlhf/models/loss.py
    loss_tree, loss_name = parse(sources, rel, LOSS)
    loss_nodes = pick_closure(loss_tree, ["PolicyLoss"], loss_name)
    loss_ns: dict[str, Any] = {
        "__name__": "openrlhf.models.loss", "torch": torch, "nn": nn, "F": F, "dist": dist, "Optional": Optional,
        "Tuple": Tuple, "masked_mean": mu_ns["masked_mean"],
    }
    exec_nodes(loss_nodes, loss_ns, loss_name)
    picked += [f"{LOSS}:{node_name(n)}" for n in loss_nodes]
    nodes["PolicyLoss"] = top_level(loss_tree, loss_name)["PolicyLoss"]
    defs = top_level(loss_tree, loss_name)
    if "aggregate_loss" in defs:
        nodes["aggregate_loss"] = defs["aggregate_loss"]
        if "aggregate_loss" not in loss_ns:
            loss_nodes2 = pick_closure(loss_tree, ["aggregate_loss"], loss_name)
            exec_nodes(loss_nodes2, loss_ns, loss_name)
            picked += [f"{LOSS}:{node_name(n)}" for n in loss_nodes2 if f"{LOSS}:{node_name(n)}" not in picked]

    # ---- openrlhf/trainer/ppo_utils/kl_controller.py
    klc_tree, klc_name = parse(sources, rel, KLC)
    klc_nodes = pick_closure(klc_tree, ["FixedKLController"], klc_name)
    klc_ns: dict[str, Any] = {"__name__": "openrlhf.trainer.ppo_utils.kl_controller"}
    exec_nodes(klc_nodes, klc_ns, klc_name)
    picked += [f"{KLC}:{node_name(n)}" for n in klc_nodes]

    # ---- openrlhf/utils/loss_utils.py (v0.10.3+)
    lu_ns: dict[str, Any] = {}
    if LOSS_UTILS in rel.files:
        lu_tree, lu_name = parse(sources, rel, LOSS_UTILS)
        roots = [r for r in ("get_loss_batch_info", "iter_grad_accum_global_norm") if r in top_level(lu_tree, lu_name)]
        lu_nodes = pick_closure(lu_tree, roots, lu_name)
        lu_ns = {"__name__": "openrlhf.utils.loss_utils", "torch": torch, "dist": dist, "Optional": Optional}
        exec_nodes(lu_nodes, lu_ns, lu_name)
        picked += [f"{LOSS_UTILS}:{node_name(n)}" for n in lu_nodes]
        if dist.is_initialized():
            raise SystemExit("torch.distributed must not be initialised")

    # ---- openrlhf/utils/config.py (v0.10.2+)
    hier = None
    if CONFIG in rel.files:
        cfg_tree, cfg_name = parse(sources, rel, CONFIG)
        cfg_nodes = pick_closure(cfg_tree, ["hierarchize"], cfg_name)
        cfg_ns: dict[str, Any] = {"__name__": "openrlhf.utils.config", "SimpleNamespace": types.SimpleNamespace}
        exec_nodes(cfg_nodes, cfg_ns, cfg_name)
        hier = cfg_ns["hierarchize"]
        picked += [f"{CONFIG}:{node_name(n)}" for n in cfg_nodes]

    # ---- openrlhf/cli/train_ppo_ray.py: argparse block and the eps_clip_low_high fallback
    cli_tree, cli_name = parse(sources, rel, CLI)
    mains = [n for n in cli_tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "__name__ == '__main__'"]
    if len(mains) != 1:
        raise SystemExit(f"{cli_name}: expected one __main__ block")
    body = mains[0].body
    cut = [i for i, st in enumerate(body) if ast.unparse(st) == "args = parser.parse_args()"]
    if len(cut) != 1:
        raise SystemExit(f"{cli_name}: expected one 'args = parser.parse_args()'")
    parser_stmts = body[:cut[0]]
    for st in parser_stmts:
        text = ast.unparse(st)
        ok = (text == "parser = argparse.ArgumentParser()"
              or (isinstance(st, ast.Expr) and text.startswith("parser.add_argument("))
              or (isinstance(st, ast.For) and all(isinstance(s, ast.Expr) and ast.unparse(s).startswith(
                  "parser.add_argument(") for s in st.body)))
        if not ok:
            raise SystemExit(f"{cli_name}: unexpected statement before parse_args: {text[:80]}")
    bp = wrap_function("build_parser", [], parser_stmts, "parser")
    cli_ns: dict[str, Any] = {"__name__": "openrlhf.cli.train_ppo_ray", "argparse": argparse,
                              "datetime": FixedDatetime}
    exec_nodes([bp], cli_ns, cli_name)
    picked.append(f"{CLI}:__main__ block lines {parser_stmts[0].lineno}-{parser_stmts[-1].end_lineno} "
                  f"(ArgumentParser + add_argument calls)")
    dotted = hier is not None
    eps_test = "args.actor.eps_clip_low_high is None" if dotted else "args.eps_clip_low_high is None"
    eps = [st for st in body[cut[0]:] if isinstance(st, ast.If) and ast.unparse(st.test) == eps_test]
    if len(eps) != 1:
        raise SystemExit(f"{cli_name}: expected one 'if {eps_test}:'")
    if dotted:
        hier_stmts = [st for st in body[cut[0]:] if ast.unparse(st) in (
            "from openrlhf.utils.config import hierarchize", "args = hierarchize(args)")]
        if len(hier_stmts) != 2 or hier_stmts[1].lineno > eps[0].lineno:
            raise SystemExit(f"{cli_name}: hierarchize(args) not found before the eps fallback")
    ef = wrap_function("eps_fallback", ["args"], [eps[0]], "args")
    exec_nodes([ef], cli_ns, cli_name)
    picked.append(f"{CLI}:__main__ block line {eps[0].lineno} (if {eps_test}: ...)")

    # ---- openrlhf/trainer/ray/ppo_actor.py
    actor_tree, actor_name = parse(sources, rel, ACTOR)
    init = pick_method(actor_tree, "ActorPPOTrainer", "__init__", actor_name)
    wanted = {"self.max_epochs", "self.actor_loss_fn", "self.aux_loss"}
    init_stmts = [st for st in init.body if isinstance(st, ast.Assign) and len(st.targets) == 1
                  and ast.unparse(st.targets[0]) in wanted]
    if sorted(ast.unparse(s.targets[0]) for s in init_stmts) != sorted(wanted):
        raise SystemExit(f"{actor_name}: __init__ does not assign {sorted(wanted)} once each at top level")
    isub = wrap_function("init_subset", ["self"], init_stmts, None)
    ppo_train = pick_method(actor_tree, "ActorPPOTrainer", "ppo_train", actor_name)
    training_step = pick_method(actor_tree, "ActorPPOTrainer", "training_step", actor_name)
    nodes["ppo_train"] = ppo_train
    nodes["training_step"] = training_step
    nodes["init_stmts"] = init_stmts
    actor_ns: dict[str, Any] = {
        "__name__": "openrlhf.trainer.ray.ppo_actor", "torch": TorchForPpoTrain(), "DataLoader": DataLoaderStandIn,
        "tqdm": TqdmStandIn, "Dict": Dict, "Optional": Optional, "List": List, "Experience": Experience,
        "fields": dataclasses.fields, "merge_mm_train_inputs": merge_mm_train_inputs_standin,
        "compute_approx_kl": mu_ns["compute_approx_kl"], "masked_mean": mu_ns["masked_mean"],
        "PolicyLoss": loss_ns["PolicyLoss"],
    }
    if "aggregate_loss" in loss_ns:
        actor_ns["aggregate_loss"] = loss_ns["aggregate_loss"]
    for name in ("get_loss_batch_info", "iter_grad_accum_global_norm"):
        if name in lu_ns:
            actor_ns[name] = lu_ns[name]
    exec_nodes([isub, ppo_train, training_step], actor_ns, actor_name)
    picked += [f"{ACTOR}:ActorPPOTrainer.__init__ lines {', '.join(str(s.lineno) for s in init_stmts)} "
               f"({', '.join(ast.unparse(s.targets[0]) for s in init_stmts)})",
               f"{ACTOR}:ActorPPOTrainer.ppo_train", f"{ACTOR}:ActorPPOTrainer.training_step"]

    # ---- deepspeed.py: only checked, for the accumulated_gradient formula the strategy stand-in uses
    if "self.accumulated_gradient = (" not in sources[DS] or "// self.micro_train_batch_size" not in sources[DS]:
        raise SystemExit(f"{rel.label}: {DS} accumulated_gradient formula not found")
    picked.append(f"{DS}: read only (accumulated_gradient formula and ds_config train_batch_size / "
                  f"train_micro_batch_size_per_gpu), not executed")
    return Loaded(rel, sources, cli_ns["build_parser"], hier, cli_ns["eps_fallback"], actor_ns["init_subset"],
                  actor_ns["ppo_train"], actor_ns["training_step"], klc_ns["FixedKLController"], picked, dotted,
                  nodes)


# --------------------------------------------------------------------------------------
# Args for one case
# --------------------------------------------------------------------------------------


def spell(ld: Loaded, key: str) -> str:
    flat, dotted = FLAGS[key]
    return dotted if ld.dotted else flat


def get_arg(ld: Loaded, args: Any, flag: str) -> Any:
    node = args
    for part in (flag[2:].split(".") if ld.dotted else [flag[2:]]):
        node = getattr(node, part)
    return node


def set_arg(ld: Loaded, args: Any, flag: str, value: Any) -> None:
    parts = flag[2:].split(".") if ld.dotted else [flag[2:]]
    node = args
    for part in parts[:-1]:
        node = getattr(node, part)
    if not hasattr(node, parts[-1]):
        raise SystemExit(f"{ld.rel.label}: args has no {flag}")
    setattr(node, parts[-1], value)


def argv_of(config: dict) -> list[str]:
    argv: list[str] = []
    for flag, value in config.items():
        if value is True:
            argv.append(flag)
        elif isinstance(value, bool):
            raise SystemExit(f"{flag}: store_true flags can only be set to true")
        elif isinstance(value, list):
            argv += [flag, *[repr(v) for v in value]]
        else:
            argv += [flag, repr(value) if isinstance(value, float) else str(value)]
    return argv


def build_args(ld: Loaded, config: dict, rows: int) -> Any:
    parser = ld.build_parser()
    args = parser.parse_args(argv_of(config))
    if ld.hierarchize is not None:
        args = ld.hierarchize(args)
    args = ld.eps_fallback(args)
    # the window rule: the batch's B rows are one optimizer-step window on one rank
    set_arg(ld, args, spell(ld, "train_batch_size"), rows)
    return args


# --------------------------------------------------------------------------------------
# Running one case
# --------------------------------------------------------------------------------------


def run_case(ld: Loaded, config: dict, b: dict) -> dict:
    rows, _width = b["lp"].shape
    args = build_args(ld, config, rows)
    micro = get_arg(ld, args, spell(ld, "micro_train_batch_size"))
    if rows % micro != 0:
        raise SystemExit(f"B={rows} is not a multiple of micro_train_batch_size {micro}")
    gas = rows // micro  # DeepspeedStrategy.accumulated_gradient with world size 1
    if getattr(args, "use_dynamic_batch", False) or getattr(getattr(args, "train", None), "dynamic_batch_enable",
                                                             False):
        raise SystemExit("dynamic batch is not recorded")
    lp_leaf = b["lp"].detach().clone().requires_grad_(True)
    calls: list = []
    strategy = StrategyStandIn(gas, lp_leaf)
    trainer_cls = type("ActorPPOTrainer", (), {"ppo_train": ld.ppo_train, "training_step": ld.training_step})
    trainer = trainer_cls()
    trainer.args = args
    trainer.strategy = strategy
    trainer.actor = ActorStandIn(lp_leaf, b["ent"], calls)
    trainer.actor_optim = Forbidden("actor_optim")
    trainer.actor_scheduler = SchedulerStandIn()
    trainer.replay_buffer = ReplayBufferStandIn(b, micro)
    trainer.ema_model = None
    trainer.ema_beta = 0.992
    trainer.dataloader_pin_memory = False
    init_kl = get_arg(ld, args, spell(ld, "init_kl_coef"))
    try:
        ld.init_subset(trainer)
        if trainer.max_epochs != 1:
            raise SystemExit("only max_epochs 1 (the default) is modelled")
        kl_ctl = ld.fixed_kl(init_kl).value
        trainer.ppo_train(kl_ctl)
    except (StandInError, SystemExit):
        raise
    except Exception as exc:  # noqa: BLE001 - upstream raised for this configuration: record the message
        import traceback  # noqa: PLC0415

        where = [f"{Path(f.filename).name}:{f.lineno} ({f.name})" for f in traceback.extract_tb(exc.__traceback__)
                 if f.filename.startswith("OpenRLHF/OpenRLHF@")]
        return {"raises": f"{type(exc).__name__}: {exc}" + (f" [raised at {where[-1]}]" if where else ""),
                "backward_before_raise": len(strategy.backward_losses)}
    expect = [list(range(i, i + micro)) for i in range(0, rows, micro)]
    if calls != expect:
        raise SystemExit(f"micro-batches {calls}, expected {expect}")
    if len(strategy.backward_losses) != len(calls) or len(strategy.steps) != 1:
        raise SystemExit(f"{len(strategy.backward_losses)} backward calls, {len(strategy.steps)} optimizer steps")
    grad = strategy.steps[0]
    if grad is None or not torch.equal(grad, lp_leaf.grad):
        raise SystemExit("gradient changed after the optimizer step")
    total = 0.0
    for value in strategy.backward_losses:
        total += value
    shuffle = trainer.replay_buffer.loaders[0].shuffle_requested
    return {"loss": total, "grad": grad, "shuffle": shuffle,
            "micro_batches": [{"rows": r, "loss": v} for r, v in zip(calls, strategy.backward_losses)]}


# --------------------------------------------------------------------------------------
# Batches
# --------------------------------------------------------------------------------------

EDGES = (0.8, 0.9, 1.1, 1.2, 1.28, 3.0, 0.5, 5.0, 2.0, IS_THRESHOLD[0], IS_THRESHOLD[1])
RANDOM_ROWS = {"random0": 4, "random1": 8, "random_empty": 4}
BATCH_RULE = (
    "Every case is ONE OPTIMIZER-STEP WINDOW ON ONE RANK (dp 1): the batch's B rows are the "
    "rank's whole replay buffer and train_batch_size (--train_batch_size, --train.batch_size "
    "from v0.10.2) is set to B, so DeepSpeed's accumulated_gradient is B // "
    "micro_train_batch_size and ppo_train runs exactly that many micro-batches (max_epochs 1). "
    "Rows are presented to training_step in the order the (stand-in) dataloader yields them: "
    "contiguous micro-batches of micro_train_batch_size rows in row order. Upstream's "
    "DataLoader shuffles (shuffle=True unless ring attention / tensor parallel / dynamic "
    "batch); the recorder fixes the order, and provenance.releases[label]."
    "dataloader_shuffle_upstream says whether the release's ppo_train asked for shuffling (with the "
    "recorded flags). Streams are [B, T] "
    "float64, right-padded; advantages are given per row ([B]) and passed as the [B, T] "
    "tensor adv[b, t] = advantages[b] at response tokens, 0.0 at padding; action_mask is "
    "passed as torch.int64 (samples_generator / experience_maker build it with "
    "torch.zeros_like(attention_mask), an int64 tensor). 'builtin' is "
    "test/fixtures/polgrad/which_example.json key 'batch' (B=4, T=8; logprobs / old_logprobs "
    "at padding used as stored; ref_logprobs := old_logprobs; no entropies, no "
    "rollout_logprobs: cases that need them are not run on it). Random batches random0 "
    "(B=4), random1 (B=8), random_empty (B=4, one row emptied): seed = "
    "zlib.crc32(name) & 0x7FFFFFFF, attempt k >= 1 uses crc32(name + ':' + str(k)) with name "
    "'openrlhf-releases/<batch>'; draws from torch.Generator().manual_seed(seed), float64, in "
    "this order: T = randint(5..8); row lengths L_b = randint(1..T); for random_empty row r = "
    "randint(0..B-1) gets L_r = 0; logprobs = U[-3, -0.5]; old = logprobs + 0.5 * N(0,1); ref = "
    "logprobs + 0.1 * N(0,1); rollout_logprobs = old + 0.05 * N(0,1); advantages ~ N(0,1) "
    "[B]; entropies = U[0.1, 3] (randint via torch.randint, U via low + (high-low) * "
    "torch.rand, N via torch.randn, each with the generator). Every stream is then 0.0 at "
    "padding. An attempt is rejected unless some row has 0 < L < T, every old / ref / "
    "rollout value at a response token is < 0, some response token has A > 0 and ratio "
    "exp(lp - old) > 1.2 and some has A < 0 and ratio < 0.8 (both PPO clip sides bind), "
    "some token has A < 0 and ratio > 3.0 (dual clip 3.0 binds), and token ratios, "
    "sequence-mean ratios exp(mean(lp - old)) and exp(mean(lp - rollout)) (GSPO), token IS "
    "ratios exp(old - rollout) and their sequence geometric means exp(mean(old - rollout)) "
    "(seq-mask-tis) stay more than 1e-9 away from the edges 0.8, 0.9, 1.1, 1.2, 1.28, 3.0, "
    "0.5, 5.0, 2.0, 0.97, 1.03 (clip bounds of eps 0.2 / 0.1 / high 0.28, dual clip, the IS "
    "threshold defaults [0.5, 5.0] and 2.0 and the pair [0.97, 1.03] the IS cases use). Each "
    "case embeds its batch (or the string 'builtin'). The recorded numbers: loss = the sum, "
    "in micro-batch order, of the scalars that reach loss.backward() (the loss "
    "training_step passes to strategy.backward, divided by DeepSpeed's "
    "gradient_accumulation_steps when that is > 1); micro_batches lists each micro-batch's "
    "rows and that scalar; grad_logprobs = the float64 leaf gradient accumulated by those "
    "backward calls at the window's optimizer step ([B, T], zeros at padding, possibly "
    "-0.0). old / ref / rollout log-probs, advantages and entropies carry no gradient (the "
    "entropy's own dependence on the logits is not in grad_logprobs)."
)


def draw_random(name: str, rows: int, empty_row: bool) -> dict:
    for attempt in range(5000):
        full = f"openrlhf-releases/{name}"
        seed = zlib.crc32((full if attempt == 0 else f"{full}:{attempt}").encode()) & 0x7FFFFFFF
        g = torch.Generator().manual_seed(seed)
        width = int(torch.randint(5, 9, (1,), generator=g).item())
        lengths = [int(torch.randint(1, width + 1, (1,), generator=g).item()) for _ in range(rows)]
        if empty_row:
            lengths[int(torch.randint(0, rows, (1,), generator=g).item())] = 0
        mask = torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]

        def u(lo: float, hi: float) -> Any:
            return lo + (hi - lo) * torch.rand(rows, width, generator=g, dtype=torch.float64)

        lp = u(-3.0, -0.5)
        old = lp + 0.5 * torch.randn(rows, width, generator=g, dtype=torch.float64)
        ref = lp + 0.1 * torch.randn(rows, width, generator=g, dtype=torch.float64)
        rollout = old + 0.05 * torch.randn(rows, width, generator=g, dtype=torch.float64)
        adv = torch.randn(rows, generator=g, dtype=torch.float64)
        ent = u(0.1, 3.0)
        zero = torch.zeros((), dtype=torch.float64)
        lp, old, ref, rollout, ent = (torch.where(mask, x, zero) for x in (lp, old, ref, rollout, ent))
        if not any(0 < n < width for n in lengths):
            continue
        if max(old[mask].max().item(), ref[mask].max().item(), rollout[mask].max().item()) >= 0.0:
            continue
        a2 = adv[:, None].expand(rows, width)
        ratio = torch.exp(lp - old)
        if not (bool((mask & (a2 > 0) & (ratio > 1.2)).any()) and bool((mask & (a2 < 0) & (ratio < 0.8)).any())):
            continue
        if not bool((mask & (a2 < 0) & (ratio > 3.0)).any()):
            continue
        lens = mask.sum(-1).clamp(min=1)
        seq = lambda x: torch.exp((x * mask).sum(-1) / lens)  # noqa: E731
        probes = torch.cat([ratio[mask], seq(lp - old), seq(lp - rollout), torch.exp(old - rollout)[mask],
                            seq(old - rollout)])
        if any(bool((probes - e).abs().min() <= 1e-9) for e in EDGES):
            continue
        return {"name": name, "seed": seed, "lp": lp, "old": old, "ref": ref, "rollout": rollout, "adv_row": adv,
                "ent": ent, "mask": mask}
    raise SystemExit(f"{name}: no acceptable draw")


def load_builtin() -> dict:
    data = json.loads(BUILTIN_BATCH_FILE.read_text(encoding="utf-8"))["batch"]
    f64 = torch.float64
    lp = torch.tensor(data["logprobs"], dtype=f64)
    old = torch.tensor(data["old_logprobs"], dtype=f64)
    mask = torch.tensor(data["response_mask"], dtype=torch.bool)
    return {"name": "builtin", "lp": lp, "old": old, "ref": old.clone(), "rollout": None,
            "adv_row": torch.tensor(data["advantages"], dtype=f64), "ent": None, "mask": mask}


def prepared(raw: dict) -> dict:
    mask = raw["mask"]
    rows, width = mask.shape
    adv = torch.where(mask, raw["adv_row"][:, None].expand(rows, width), torch.zeros((), dtype=torch.float64))
    return {"lp": raw["lp"], "old": raw["old"], "ref": raw["ref"], "rollout": raw["rollout"], "ent": raw["ent"],
            "adv": adv.contiguous(), "mask_long": mask.to(torch.int64)}


def batch_json(raw: dict) -> Any:
    if raw["name"] == "builtin":
        return "builtin"
    return {
        "logprobs": raw["lp"].tolist(), "old_logprobs": raw["old"].tolist(), "ref_logprobs": raw["ref"].tolist(),
        "rollout_logprobs": raw["rollout"].tolist(), "advantages": raw["adv_row"].tolist(),
        "response_mask": raw["mask"].tolist(), "entropies": raw["ent"].tolist(),
    }


# --------------------------------------------------------------------------------------
# Case lists
# --------------------------------------------------------------------------------------


def has_flag(parser: Any, flag: str) -> bool:
    return flag in parser._option_string_actions  # noqa: SLF001 - argparse's own table of option strings


def case_specs(ld: Loaded) -> list[tuple[str, dict, list[str]]]:
    """(case key, config, batch names) for one release."""
    label = ld.rel.label
    parser = ld.build_parser()
    s = lambda k: spell(ld, k)  # noqa: E731
    std = ["builtin", "random0", "random1"]
    rnd = ["random0", "random1"]
    with_empty = std + ["random_empty"]
    full = label in FULL_RELEASES
    specs: list[tuple[str, dict, list[str]]] = [("default", {}, with_empty if full else std)]
    is_pair = has_flag(parser, s("vllm_is_truncated_threshold")) and parser._option_string_actions[  # noqa: SLF001
        s("vllm_is_truncated_threshold")].nargs == 2
    thr = IS_THRESHOLD if is_pair else IS_THRESHOLD_SINGLE
    if label in ERA_RELEASES:
        specs += [
            ("micro_train_batch_size=2,eps_clip=0.1", {s("micro_train_batch_size"): 2, s("eps_clip"): 0.1}, std),
            ("use_kl_loss,init_kl_coef=0.01", {s("use_kl_loss"): True, s("init_kl_coef"): 0.01}, std),
        ]
        if label in ("v0.8.9", "v0.8.10"):  # gspo / IS eras (v0.8.8's gspo is recorded below)
            specs += [
                ("policy_loss_type=gspo", {s("policy_loss_type"): "gspo"}, std),
                ("enable_vllm_is_correction", {s("enable_vllm_is_correction"): True,
                                               s("vllm_is_truncated_threshold"): thr}, rnd),
                ("policy_loss_type=gspo,enable_vllm_is_correction", {
                    s("policy_loss_type"): "gspo", s("enable_vllm_is_correction"): True,
                    s("vllm_is_truncated_threshold"): thr}, rnd),
            ]
        if label == "v0.9.1":
            specs += [
                ("enable_vllm_is_correction", {s("enable_vllm_is_correction"): True,
                                               s("vllm_is_truncated_threshold"): thr}, rnd),
                ("enable_vllm_is_correction,use_icepop", {s("enable_vllm_is_correction"): True,
                                                          s("vllm_is_truncated_threshold"): thr,
                                                          "--use_icepop": True}, rnd),
            ]
        if label == "v0.9.4":
            for kind in ("tis", "icepop", "seq-mask-tis"):
                specs.append((f"enable_vllm_is_correction,vllm_is_correction_type={kind}", {
                    s("enable_vllm_is_correction"): True, s("vllm_is_truncated_threshold"): thr,
                    s("vllm_is_correction_type"): kind}, rnd))
        if label in ("v0.10.3", "v0.10.4"):
            specs.append(("micro_train_batch_size=2", {s("micro_train_batch_size"): 2}, ["random1"]))
    if label == "v0.8.8":
        specs.append(("policy_loss_type=gspo", {s("policy_loss_type"): "gspo"}, std))
    if full:
        specs += [
            ("eps_clip=0.1", {s("eps_clip"): 0.1}, std),
            ("eps_clip_low_high=0.2,0.28", {s("eps_clip_low_high"): [0.2, 0.28]}, std),
            ("dual_clip=3.0", {s("dual_clip"): 3.0}, std),
            ("policy_loss_type=gspo", {s("policy_loss_type"): "gspo"}, with_empty),
        ]
        for est in ("k1", "k2", "k3"):
            specs.append((f"use_kl_loss,init_kl_coef=0.01,kl_estimator={est}", {
                s("use_kl_loss"): True, s("init_kl_coef"): 0.01, s("kl_estimator"): est}, std))
        specs.append(("entropy_loss_coef=0.01", {s("entropy_loss_coef"): 0.01}, rnd))
        for kind in ("tis", "icepop", "seq-mask-tis"):
            specs.append((f"enable_vllm_is_correction,vllm_is_correction_type={kind}", {
                s("enable_vllm_is_correction"): True, s("vllm_is_truncated_threshold"): thr,
                s("vllm_is_correction_type"): kind}, rnd + (["random_empty"] if kind == "seq-mask-tis" else [])))
        specs.append(("policy_loss_type=gspo,enable_vllm_is_correction", {
            s("policy_loss_type"): "gspo", s("enable_vllm_is_correction"): True,
            s("vllm_is_truncated_threshold"): thr}, rnd))
        for m in (1, 2, 4):
            specs.append((f"micro_train_batch_size={m}", {s("micro_train_batch_size"): m}, with_empty))
        # empty rows with micro 2: at micro 1 (the default) a micro-batch holding only the empty row
        # makes ppo_train's metric reduction divide by zero (recorded as upstream_raises above)
        specs.append(("policy_loss_type=gspo,micro_train_batch_size=2", {
            s("policy_loss_type"): "gspo", s("micro_train_batch_size"): 2}, ["random_empty"]))
        specs.append(("enable_vllm_is_correction,vllm_is_correction_type=seq-mask-tis,micro_train_batch_size=2", {
            s("enable_vllm_is_correction"): True, s("vllm_is_truncated_threshold"): thr,
            s("vllm_is_correction_type"): "seq-mask-tis", s("micro_train_batch_size"): 2}, ["random_empty"]))
        specs.append(("micro_train_batch_size=2,eps_clip=0.1", {s("micro_train_batch_size"): 2, s("eps_clip"): 0.1},
                      std))
        specs.append(("combined", {
            s("micro_train_batch_size"): 2, s("eps_clip_low_high"): [0.2, 0.28], s("dual_clip"): 3.0,
            s("use_kl_loss"): True, s("init_kl_coef"): 0.01, s("kl_estimator"): "k3",
            s("entropy_loss_coef"): 0.01, s("enable_vllm_is_correction"): True,
            s("vllm_is_truncated_threshold"): thr, s("vllm_is_correction_type"): "tis",
        }, rnd))
        # Every loss-relevant flag at once (issue 14's acceptance): the combined case plus the
        # flags that are inert there (eps_clip under an explicit pair, ppo).
        specs.append(("every_loss_key", {
            s("micro_train_batch_size"): 2, s("eps_clip"): 0.25, s("eps_clip_low_high"): [0.2, 0.28],
            s("dual_clip"): 3.0, s("policy_loss_type"): "ppo", s("use_kl_loss"): True,
            s("init_kl_coef"): 0.01, s("kl_estimator"): "k3", s("entropy_loss_coef"): 0.01,
            s("enable_vllm_is_correction"): True, s("vllm_is_truncated_threshold"): thr,
            s("vllm_is_correction_type"): "icepop",
        }, rnd))
    out = []
    for key, config, names in specs:
        missing = [f for f in config if not has_flag(parser, f)]
        if missing:
            raise SystemExit(f"{label}/{key}: flags {missing} do not exist at this release")
        out.append((key, config, names))
    return out


# --------------------------------------------------------------------------------------
# Rules prose (per release, derived from the picked code)
# --------------------------------------------------------------------------------------


def rules_text(ld: Loaded) -> str:
    src_actor = ld.sources[ACTOR]
    src_loss = ld.sources[LOSS]
    src_mu = ld.sources[MUTILS]
    ts = ld.nodes["training_step"]
    pt = ld.nodes["ppo_train"]
    pl = ld.nodes["PolicyLoss"]
    kl = ld.nodes["compute_approx_kl"]
    pl_src = ast.unparse(pl)
    kl_src = ast.unparse(kl)
    ts_src = ast.unparse(ts)
    pt_src = ast.unparse(pt)
    ctor = [ast.unparse(s) for s in ld.nodes["init_stmts"] if ast.unparse(s.targets[0]) == "self.actor_loss_fn"][0]
    parts = [
        f"Executed: ActorPPOTrainer.ppo_train ({ACTOR} line {pt.lineno}) with a stand-in self, which calls "
        f"ActorPPOTrainer.training_step (line {ts.lineno}) once per micro-batch; the loss function is "
        f"built by the release's own statement `{ctor}`."
    ]
    bw = line_of(src_actor, ts, "self.strategy.backward(loss")
    window = "iter_grad_accum_global_norm" in pt_src
    lbi = "get_loss_batch_info" in ts_src
    if window:
        parts.append(
            "Window scaling: ppo_train groups the dataloader's micro-batches into windows of "
            "strategy.accumulated_gradient (gas) micro-batches (iter_grad_accum_global_norm) and gives each "
            "the same loss_batch_info: dp_size 1, batch_num_tokens = (window's action-mask token count, "
            "float32) / gas, global_batch_size = (window's non-empty rows, float32) / gas; PolicyLoss, the KL "
            "term and the entropy term aggregate with aggregate_loss(..., **loss_batch_info): token level "
            "(sum(x * mask) / batch_num_tokens * dp_size), sample level (sum over non-empty rows of the row's "
            "token mean / global_batch_size * dp_size). After DeepSpeed's 1/gas in backward, the window's "
            "micro-batch losses sum to one token mean (or non-empty-row mean) over the whole window. An empty "
            "window (no tokens) would divide by zero; not recorded.")
    elif lbi:
        parts.append(
            "Micro-batch scaling: training_step calls get_loss_batch_info(strategy, action_mask, ...) per "
            "micro-batch (no window): batch_num_tokens = the micro-batch's own token count (float32), "
            "global_batch_size = its non-empty rows (float32), dp_size 1; aggregate_loss then gives the "
            "micro-batch's own token mean (sample level: mean over its non-empty rows of row token means). Each "
            "micro-batch loss is divided by gas = train_batch_size // micro_train_batch_size in DeepSpeed's "
            "backward, so the window is the mean of micro-batch means. A micro-batch with no tokens gives 0/0.")
    else:
        parts.append(
            "Micro-batch scaling: every term is the micro-batch's own masked_mean ((x * mask).sum() / "
            "mask.sum()); each micro-batch loss is divided by gas = train_batch_size // micro_train_batch_size "
            "in DeepSpeed's backward, so the window is the mean of micro-batch means. A micro-batch with no "
            "response token gives 0/0 = NaN (not recorded).")
    parts.append(f"Backward: self.strategy.backward(loss, ...) at line {bw}; optimizer_step after every "
                 "micro-batch, DeepSpeed steps only at the accumulation boundary (the recorded gradient).")
    clamp20 = "clamp(min=-20.0, max=20.0)" in pl_src
    parts.append("Policy ratio: ppo ratio = exp(clamp(lp - old, -20, 20))" if clamp20
                 else "Policy ratio: ppo ratio = exp(lp - old) (no clamp)")
    if "gspo" in pl_src:
        den = ("action_mask.sum(dim=-1).clamp(min=1)" if "action_mask.sum(dim=-1).clamp(min=1)" in pl_src
               else "action_mask.sum(dim=-1) (an empty row gives 0/0)")
        is_src = "log_ratio = log_probs - rollout_log_probs" in pl_src
        parts.append(f"; gspo ratio = exp(sum(log_ratio * mask) / {den}) * mask with log_ratio = "
                     + ("lp - rollout when IS correction is enabled, else lp - old" if is_src else "lp - old")
                     + ("; gspo forces token_level_loss False (sample level: "
                        + ("aggregate_loss sample mode: row sum / (token_counts + 1e-8), where token_counts is the "
                           "int64 mask's row sum, so token_counts + 1e-8 is a float32 tensor equal to L exactly and "
                           "the 1e-8 has no effect" if "aggregate_loss" in pl_src
                           else "masked_mean(loss, mask, dim=-1).mean(), i.e. the plain mean of row token means over "
                                "ALL rows of the micro-batch") + ")"
                        if "if policy_loss_type == 'gspo':\n            self.token_level_loss = False" in pl_src
                        else "; gspo keeps token_level_loss True (the trainer never sets it), so the per-token "
                             "losses of the sequence ratio are aggregated by the token-level masked_mean"))
    if "dual_clip" in pl_src:
        parts.append("; dual clip: loss = -where(A < 0, max(min(surr1, surr2), dual_clip * A), min(surr1, surr2))")
    parts.append(".")
    if "vllm_is" in pl_src:
        only_ppo = "self.enable_vllm_is_correction and self.policy_loss_type == 'ppo'" in pl_src
        parts.append(
            " IS correction (vLLM): the per-token loss is multiplied by a detached weight from "
            "exp(old - rollout) before aggregation"
            + (" (only for policy_loss_type ppo; gspo instead uses rollout log-probs in its ratio)" if only_ppo
               else " (for every policy_loss_type)")
            + "; " + ("types: tis = clamp(w, low, high); icepop = w * (low <= w <= high); seq-mask-tis = "
                      "w * (low <= exp(masked_mean(old - rollout, mask, dim=-1)) <= high) per row"
                      if "seq-mask-tis" in pl_src else
                      ("types: tis = clamp(w, low, high), icepop (use_icepop / 'icepop') = w * (low <= w <= high)"
                       if "icepop" in pl_src else "w = clamp(w, max=threshold) (one float threshold)"))
            + ". The threshold is passed only when the correction is enabled.")
    kl_f32 = ".float()" in kl_src
    kl_clamp = "clamp(min=-10, max=10)" in kl_src
    kl_agg = "aggregate_loss(kl" in ts_src
    parts.append(
        " KL loss (use_kl_loss, --algo.kl.use_loss from v0.10.2): when init_kl_coef > 0, kl = "
        "compute_approx_kl(lp, ref, kl_estimator) "
        + ("computed in float32 (both inputs cast with .float(); the KL term, its aggregate and its gradient "
           "contribution are float32 values, promoted to float64 when added to the float64 policy loss)"
           if kl_f32 else "in the inputs' dtype (float64)")
        + (", clamped to [-10, 10]" if kl_clamp else ", not clamped")
        + "; k1 = lp - ref, k2 = (lp - ref)^2 / 2, k3 = exp(ref - lp) - 1 + (lp - ref); aggregated with "
        + ("aggregate_loss(kl, mask, **loss_batch_info) (token level)" if kl_agg else "masked_mean(kl, mask)")
        + "; loss = actor_loss + kl_loss * kl_ctl with kl_ctl = init_kl_coef (FixedKLController). "
        "When init_kl_coef == 0 the KL term is zeros.")
    ent_agg = "aggregate_loss(output.entropy" in ts_src
    parts.append(
        " Entropy (entropy_loss_coef / --actor.entropy_coef not None): entropy_loss = "
        + ("aggregate_loss(entropy, mask, **loss_batch_info)" if ent_agg else "masked_mean(entropy, mask)")
        + ", loss -= entropy_loss * coef when coef != 0 (the actor is asked for entropies whenever the coef "
        "is not None).")
    parts.append(" Defaults from this release's argparse: micro_train_batch_size = "
                 + str(ld.build_parser().get_default(spell(ld, "micro_train_batch_size")[2:])) + ".")
    del src_loss, src_mu
    text = ""
    for part in parts:
        text += part if (not text or part[0] in ";.") else (part if part.startswith(" ") else " " + part)
    return text


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


def finite_float(value: float) -> bool:
    return isinstance(value, float) and math.isfinite(value)


def main() -> None:
    global torch
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--openrlhf-git", default=os.environ.get("OPENRLHF_GIT"),
                        help="git directory (bare) of OpenRLHF/OpenRLHF (default: $OPENRLHF_GIT)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output JSON file")
    args = parser.parse_args()
    if not args.openrlhf_git:
        parser.error("--openrlhf-git (or $OPENRLHF_GIT) is required")
    git_dir = Path(args.openrlhf_git).resolve()
    if (git_dir / ".git").is_dir():
        git_dir = git_dir / ".git"
    sys.dont_write_bytecode = True
    import torch as _torch  # noqa: PLC0415
    torch = _torch
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    command = shlex.join([sys.executable, TOOL_PATH, *sys.argv[1:]])
    if "--openrlhf-git" not in sys.argv[1:]:
        command = f"OPENRLHF_GIT={shlex.quote(args.openrlhf_git)} {command}"

    check_facts_file()
    raw_batches = {"builtin": load_builtin()}
    for name, rows in RANDOM_ROWS.items():
        raw_batches[name] = draw_random(name, rows, name == "random_empty")
    batches = {k: prepared(v) for k, v in raw_batches.items()}

    releases_prov: dict[str, Any] = {}
    cases: list[dict] = []
    raised: list[str] = []
    non_finite: list[str] = []
    for rel in RELEASES:
        sources = read_release(git_dir, rel)
        ld = load_release(rel, sources)
        shuffles: set = set()
        for key, config, batch_names in case_specs(ld):
            for bname in batch_names:
                name = f"{rel.label}/{key}/{bname}"
                result = run_case(ld, config, batches[bname])
                case: dict[str, Any] = {
                    "name": name, "release": rel.label, "config": config, "world": {}, "num_items_in_batch": None,
                    "batch": batch_json(raw_batches[bname]),
                }
                if "raises" in result:
                    raised.append(name)
                    case["upstream_raises"] = result["raises"] + (
                        f"; {result['backward_before_raise']} micro-batch backward call(s) had run")
                    cases.append(case)
                    continue
                grad = result["grad"]
                ok = bool(torch.isfinite(grad).all()) and finite_float(result["loss"])
                if not ok:
                    # upstream produced NaN / inf (e.g. 0/0 on a micro-batch without response tokens)
                    non_finite.append(name)
                    case["upstream_non_finite"] = (
                        "loss or gradient is not finite: " + ", ".join(
                            f"micro-batch rows {m['rows']} loss {m['loss']!r}" for m in result["micro_batches"]))
                    case["loss"] = None
                    case["grad_logprobs"] = None
                    case["micro_batches"] = [{"rows": m["rows"], "loss": m["loss"] if finite_float(m["loss"])
                                              else None} for m in result["micro_batches"]]
                    cases.append(case)
                    continue
                pad = ~raw_batches[bname]["mask"]
                if grad[pad].abs().sum().item() != 0.0:
                    raise SystemExit(f"{name}: gradient at padding")
                case.update({
                    "loss": result["loss"], "grad_logprobs": grad.tolist(),
                    "micro_batches": [{"rows": m["rows"], "loss": m["loss"]} for m in result["micro_batches"]],
                })
                cases.append(case)
                shuffles.add(result["shuffle"])
        if len(shuffles) != 1:
            raise SystemExit(f"{rel.label}: ppo_train's shuffle flag varies between cases")
        releases_prov[rel.label] = {
            "dataloader_shuffle_upstream": shuffles.pop(),
            "tag": rel.tag, "commit": rel.commit, "files": dict(sorted(rel.files.items())),
            "picked": ld.picked, "rules": rules_text(ld), "flag_spelling": "dotted" if ld.dotted else "flat",
        }

    builtin_sha = hashlib.sha256(BUILTIN_BATCH_FILE.read_bytes()).hexdigest()
    payload = {
        "provenance": {
            "tool": TOOL_PATH, "command": command, "repo": "OpenRLHF/OpenRLHF",
            "python": platform.python_version(), "torch": torch.__version__, "dtype": "float64",
            "releases": releases_prov, "stubs": STUBS, "batch_rule": BATCH_RULE, "skipped": SKIPPED,
            "builtin_batch": {"path": "test/fixtures/polgrad/which_example.json", "key": "batch",
                              "sha256": builtin_sha},
            "random_batch_seeds": {k: v["seed"] for k, v in sorted(raw_batches.items()) if "seed" in v},
            "release_list": FACTS_FILE,
            "upstream_raises": raised,
            "upstream_non_finite": non_finite,
        },
        "cases": cases,
    }
    text = json.dumps(payload, indent=1, sort_keys=True, allow_nan=False, ensure_ascii=False) + "\n"
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    counts: dict[str, int] = {}
    for case in cases:
        counts[case["release"]] = counts.get(case["release"], 0) + 1
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(cases)} cases)")
    for label, n in counts.items():
        print(f"  {label}: {n}")
    for name in raised:
        print(f"upstream raises: {name}")
    for name in non_finite:
        print(f"upstream non-finite: {name}")


if __name__ == "__main__":
    main()
