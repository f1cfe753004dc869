#!/usr/bin/env python3
"""Record TRL's GRPO loss at every release listed in trl.json: numbers and provenance only.

For every release in RELEASES this script reads ``trl/trainer/grpo_trainer.py``,
``trl/trainer/grpo_config.py`` and ``trl/trainer/utils.py`` out of a local git repository of
huggingface/trl (``git --git-dir=<dir> show <commit>:<path>``, in memory), checks each file's
SHA-256 against the constants below, parses them with ``ast``, picks the needed methods of
``GRPOTrainer`` (``compute_loss``, ``_compute_loss`` and the helper methods they call; at
v0.14.0 a documented statement subset of ``compute_loss``), the module-level definitions they
read, the statements of ``_generate_and_score_completions`` that decide whether old log-probs
are computed and that compute the vLLM importance-sampling ratio, and ``split_tensor_dict``;
checks their free global names against documented stand-ins, and ``exec``s exactly those nodes
in a namespace with real ``torch``. Seeded float64 batches are run through that code; only
numbers and provenance go to ``test/fixtures/frameworks/trl-releases.json``.

Usage (see tools/record-fixtures/README-trl-releases.md):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/trlReleases.py \
        --trl-git /work/.mirror/huggingface+trl/repo

Output: JSON, indent=1, sorted keys, trailing newline, byte-stable across re-runs.
"""

from __future__ import annotations

import argparse
import ast
import copy
import dataclasses
import hashlib
import json
import math
import os
import platform
import shlex
import sys
import types
import typing
from pathlib import Path
from typing import Any, Callable, Optional

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "record-releases"))
from compact import load_expanded as load_facts  # noqa: E402  - the compact release facts, expanded
import verlReleases as _verl  # noqa: E402  - shared helpers only (git, ast picking, batches)
from verlReleases import Unresolved, dataclass_fields, free_names, git, node_name  # noqa: E402

TOOL_PATH = "tools/record-fixtures/trlReleases.py"
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "test" / "fixtures" / "frameworks" / "trl-releases.json"
BUILTIN_BATCH_FILE = REPO_ROOT / "test" / "fixtures" / "polgrad" / "which_example.json"
FACTS_FILE = REPO_ROOT / "src" / "conformance" / "releases" / "data" / "trl.json"

TRAINER = "trl/trainer/grpo_trainer.py"
CONFIG = "trl/trainer/grpo_config.py"
UTILS = "trl/trainer/utils.py"


@dataclasses.dataclass(frozen=True)
class Release:
    label: str
    tag: Optional[str]
    commit: str
    files: dict  # path -> sha256 of the whole file at `commit`


# grpo_trainer.py / grpo_config.py hashes equal those in src/conformance/releases/data/trl.json
# (checked at record time); utils.py hashes were pinned when this recorder was written.
RELEASES = (
    Release('v0.14.0', 'v0.14.0', '49711efab9e0cc3762d3228c9fd5a8064d489503', {
        CONFIG: '2a884d7149342f30acb32e703421de498aec6c28b66c187432c00c8e704b4262',
        TRAINER: '18a568174c2240969c11983c58f88cc35e5dfaa152d3b23bcc7d2712b21f1c75',
        UTILS: '605c36d8667a6f2a62fb2654dd8ac3c84a3a31529f7ee981fccebe5bd6f9747d',
    }),
    Release('v0.15.0', 'v0.15.0', '00e58893809af89d07c2ff9c582ac5060888363c', {
        CONFIG: 'b781e54e07b9af8f31dd246918bda3127e7d9e83190c036e50f461bc4b51ddec',
        TRAINER: '456b3a390a8f51ce825488f564a6608a59b5c1740b63a746d2d17089d4e017be',
        UTILS: '25881fa13de28db5cdb6d811a7eb8f10a7f3167f749de17359bbe8b89aed81df',
    }),
    Release('v0.15.1', 'v0.15.1', '38c33c547fc347a85f6a889f86eb82787ae829c9', {
        CONFIG: 'b781e54e07b9af8f31dd246918bda3127e7d9e83190c036e50f461bc4b51ddec',
        TRAINER: '5ba2c35e866459c7b8f8c453ef2daebb18e8aea6e468c218afa55965d55a29b0',
        UTILS: 'e0bdf83ed408fc19494fa0bab2b8b56074c705ab1c5a786b4e3c1f2ce5244116',
    }),
    Release('v0.15.2', 'v0.15.2', 'fc2b041b58f6fbe766dceaec819bc5a8f9d209da', {
        CONFIG: 'b781e54e07b9af8f31dd246918bda3127e7d9e83190c036e50f461bc4b51ddec',
        TRAINER: '5ba2c35e866459c7b8f8c453ef2daebb18e8aea6e468c218afa55965d55a29b0',
        UTILS: 'e0bdf83ed408fc19494fa0bab2b8b56074c705ab1c5a786b4e3c1f2ce5244116',
    }),
    Release('v0.16.0', 'v0.16.0', '23a635ed61c47609c88fd0fd7bfc7b08c398742d', {
        CONFIG: '4d30d62232a448d6af5097ef6cf65a714057cca91e3d40294a16acd399b30423',
        TRAINER: '33a5bd3509e5d068e7b59a651664ba3d31375fc9fe094e66aded3a34a14592f4',
        UTILS: '2118722e8a66a1c0d2389db2adfc128139f9c2a1a84839944fbfc726229df3be',
    }),
    Release('v0.16.1', 'v0.16.1', '2bc182c4fb8180a3cb815c61ca6c528a86559d14', {
        CONFIG: '4d30d62232a448d6af5097ef6cf65a714057cca91e3d40294a16acd399b30423',
        TRAINER: '33a5bd3509e5d068e7b59a651664ba3d31375fc9fe094e66aded3a34a14592f4',
        UTILS: '2118722e8a66a1c0d2389db2adfc128139f9c2a1a84839944fbfc726229df3be',
    }),
    Release('v0.17.0', 'v0.17.0', 'cd6b3de356dd03025640681aaad7b45a1574d92f', {
        CONFIG: '83d53640316958da75c4bb73451f9562f235f886c0cc31a3c825de172c0e17cc',
        TRAINER: '425161a6e4f82ee7cc6d4d6ad3fe7e495db970289d28427f45e99368ac5e985a',
        UTILS: 'e264dd9df5f550ed29e39a412b07bbbc15801427083de8dde29e2ec1f58301a3',
    }),
    Release('v0.18.0', 'v0.18.0', 'ef4b0b225cf04600332a12a2c83f187623312098', {
        CONFIG: 'b3bab94016b90a2a4e2042449ee570e5240174fba3b9d847adfcb3ea5b354751',
        TRAINER: '55cf75b6045a05a2df3cf42a284c5f2b4c722651d59e7eea300df3b73e4a310d',
        UTILS: '87ff10b2d6145554a449007fb3cadf8998d486d8682b92b6933291dc8b5c2acc',
    }),
    Release('v0.18.1', 'v0.18.1', '2c49300910e55fd7482ad80019feee4cdaaf272c', {
        CONFIG: 'b3bab94016b90a2a4e2042449ee570e5240174fba3b9d847adfcb3ea5b354751',
        TRAINER: '8feda324228e274193954a5f00b5768f4f99042b38216d7890c6d87700471897',
        UTILS: '87ff10b2d6145554a449007fb3cadf8998d486d8682b92b6933291dc8b5c2acc',
    }),
    Release('v0.18.2', 'v0.18.2', 'a21a925e3095233149185fc50fa406c3b9bedf05', {
        CONFIG: 'b3bab94016b90a2a4e2042449ee570e5240174fba3b9d847adfcb3ea5b354751',
        TRAINER: '4a0ca177d6216e3bf9eb75ffcabf76e0301362533962144dad9b5bbb17f17e70',
        UTILS: '87ff10b2d6145554a449007fb3cadf8998d486d8682b92b6933291dc8b5c2acc',
    }),
    Release('v0.19.0', 'v0.19.0', '5b3ea9dd43b526f188ef8f63ca16bbe977ec8603', {
        CONFIG: '1cc151fb2f31588c56b15d940f2623a8cf286f5306f63309e8d872985fd692d7',
        TRAINER: 'ee2c68e56e0de001d93d5c3cf86c84b97cb9770f68f6ea113f06f952f009c290',
        UTILS: '3964b0bfa09431d3adf5be2cf2b9fbd1283512c66e42d6054b6742036e175f1e',
    }),
    Release('v0.19.1', 'v0.19.1', 'accf7383a33c618a2edc7205107120b5f32e28a3', {
        CONFIG: 'd9fc04569ea22d99bca5d33a7b15d4a01f6dce430733329685fd5c23aac04842',
        TRAINER: '6287d3451c98dee6ab87bdf13019c1a76ae553ae637ac266ebc3b8dbd881451a',
        UTILS: '3964b0bfa09431d3adf5be2cf2b9fbd1283512c66e42d6054b6742036e175f1e',
    }),
    Release('v0.20.0', 'v0.20.0', '30576d2ddcf2c0e17c399399e2465fbe81446ade', {
        CONFIG: 'f6596bc27d7a635d2b1727d6bf10a8264ff0ee7c7375e0bf8f4bddaed085b83d',
        TRAINER: '6c92d07d356c517e97b17b63a24ca0f00930fb870533b507893079b38e2f4f8e',
        UTILS: '1c68058271288a643f7b69debad050508ea455448f8226ca73f47a1fd87ce0b8',
    }),
    Release('v0.21.0', 'v0.21.0', '46d09bd2408f17605409fb3ee8ba12705add7faa', {
        CONFIG: '668d08471b745d9542ef3b34ebcbd0a732a4591679492ee9a77d472539ef7a80',
        TRAINER: '828088a479c9e95502cc0ed3ff150af302b273f8e14f9f9ddaeacb7aa0827858',
        UTILS: '1c68058271288a643f7b69debad050508ea455448f8226ca73f47a1fd87ce0b8',
    }),
    Release('v0.22.0', 'v0.22.0', '3a6b365c0dc2e117164f51b3d2f324fe16f3c646', {
        CONFIG: '34a5e091db033f969e10a66b55febeb6f79435cb83c43b926eca5b33b1b2c82e',
        TRAINER: '300428dbb87e7194966f9fb8c33bfd2e2ec53f994540f5174c72ffa6fabcc0e0',
        UTILS: '1712d810d78bd91b94c6462e13ff6a0dbdd5f7d21e41c1e28983d0159f5c14b3',
    }),
    Release('v0.22.1', 'v0.22.1', '1366bac01168cad5387fd5364bcbdeaa0cbd796d', {
        CONFIG: '34a5e091db033f969e10a66b55febeb6f79435cb83c43b926eca5b33b1b2c82e',
        TRAINER: '300428dbb87e7194966f9fb8c33bfd2e2ec53f994540f5174c72ffa6fabcc0e0',
        UTILS: '1712d810d78bd91b94c6462e13ff6a0dbdd5f7d21e41c1e28983d0159f5c14b3',
    }),
    Release('v0.22.2', 'v0.22.2', '2d597e4a188878215a588cb6e8020726e1b1e6be', {
        CONFIG: '27d0ebdb1a552cb607c662ead72c18d3d84cddb8cb64cafe5a182acf89f0172a',
        TRAINER: '87c08587d7395a3ad15ed5bf42b571715dc8f0a4540455d6d29efd830dbf4654',
        UTILS: '1712d810d78bd91b94c6462e13ff6a0dbdd5f7d21e41c1e28983d0159f5c14b3',
    }),
    Release('v0.23.0', 'v0.23.0', '6adfd138d895b7ac257c4079eab7d519a0472aaa', {
        CONFIG: '521b3b6f76c9bf2c29bf24447f5c56b76cc36e99ee3bad8a8a98478137da481d',
        TRAINER: '4658c3920040f256bc909a3c49263409441f4425c8ba6273585370cf6b025777',
        UTILS: '07cccc9023d60528544390d70efc0a505d2dc1e92473133c045d33f7ed976360',
    }),
    Release('v0.23.1', 'v0.23.1', '4529a1c8b1813480a85b02c9c8e7f75a29085d65', {
        CONFIG: '521b3b6f76c9bf2c29bf24447f5c56b76cc36e99ee3bad8a8a98478137da481d',
        TRAINER: 'f217183c84be9b38b23454920eb1b914726aa3c4b9dd4c076d455bdaa67bf1b8',
        UTILS: '07cccc9023d60528544390d70efc0a505d2dc1e92473133c045d33f7ed976360',
    }),
    Release('v0.24.0', 'v0.24.0', '04fd1203af4fc1e629f58e0ac0d0c5bb95f82a45', {
        CONFIG: 'e71900f3a0590cceb1ad67f07e9845fc3b517eae85f3d16300a32a4b652a00bb',
        TRAINER: 'bb6905182acf2ec426f1dc9ffc37e5210d58ee47d2764f7cf12dbb90a4a28954',
        UTILS: '7096881df3fd78411be857e79b82f7c0eb8f3b5d9b0771de06275bacc9af98e3',
    }),
    Release('v0.25.0', 'v0.25.0', '55f5433e15cc6203d3c731f9de5247b00878bebd', {
        CONFIG: '516af0ed3ac8342ab6f26f21bb373515036c7f8f0f025dbd032308698b6080d7',
        TRAINER: '99766b1b1baa3f5d13c304be6cf3991e1e0455bccef4448624860fc56d3be3e7',
        UTILS: '151370398b2b2ab9dfe22e3ffacf7be8f57dbf44c7d87fd7c16dfc11f899b80c',
    }),
    Release('v0.25.1', 'v0.25.1', '1cf8d56c06ce095aeaa92d0853fca68e5834a928', {
        CONFIG: '8734a2a7e636c4c8b146704f6d1b0a5e96d5f09ae56ab3a84e0cbb785daee484',
        TRAINER: '99766b1b1baa3f5d13c304be6cf3991e1e0455bccef4448624860fc56d3be3e7',
        UTILS: '773d5e650f03f7e6dfcb9c8d0c956972e03182df4980ca9ec870c7dc343e67de',
    }),
    Release('v0.26.0', 'v0.26.0', '84794a7d03c748f3e1518cd3efc9a944b8cdd2bd', {
        CONFIG: '90edab5367dd3a3eb757223a26c222eb1f83baf5a5ad0e2d9eee751d0edef60c',
        TRAINER: 'd5ce4fd1bedb73e843590159eb590f1702d049e6c8efd96d4f65af7a6723316f',
        UTILS: '111f3786cf91c9824d2a870b12211830d4d0a39577df03e13ce4961f93f9e93f',
    }),
    Release('v0.26.1', 'v0.26.1', '255a20b888c89866fd54e467addc7f58f74e7631', {
        CONFIG: '07717a3a05f4ad6edaf55bda39f5b703a1e498b87dd5ccbf60dc34ca835ccc29',
        TRAINER: '877d6510386c346372e1734589d3dedd34a3226ed7811482143aba4cdcf386b2',
        UTILS: '111f3786cf91c9824d2a870b12211830d4d0a39577df03e13ce4961f93f9e93f',
    }),
    Release('v0.26.2', 'v0.26.2', '8c26b7d0e5f5ddc0ddea0d6b519ab30e437b8731', {
        CONFIG: '07717a3a05f4ad6edaf55bda39f5b703a1e498b87dd5ccbf60dc34ca835ccc29',
        TRAINER: '199c7576e2e693073370e1bf67c61494b703bebe83d05eb9eae8fee3c5ceac3d',
        UTILS: '111f3786cf91c9824d2a870b12211830d4d0a39577df03e13ce4961f93f9e93f',
    }),
    Release('v0.27.0', 'v0.27.0', '17acd61f28140243a458d10656a2194af788ff38', {
        CONFIG: 'b8406415be7f29adda409e4a0317d23e9637da23090ad31d71c31e27c3239bb3',
        TRAINER: '5962b716d71ab267e4acdd991f29e5d82d38c79d24a6f9b80e98238f41587973',
        UTILS: '0e41c7936722a20a9098c7346e90a4714fa57687641bb164e9d03190a31bb2fc',
    }),
    Release('v0.27.1', 'v0.27.1', '83afcebfff09dd07ad11f5bc2e81624932fbadd5', {
        CONFIG: 'b8406415be7f29adda409e4a0317d23e9637da23090ad31d71c31e27c3239bb3',
        TRAINER: '8c30f0948f647fe4e0cf32d362a0442642c2b2864e74e602f030bb342e04d163',
        UTILS: '0e41c7936722a20a9098c7346e90a4714fa57687641bb164e9d03190a31bb2fc',
    }),
    Release('v0.27.2', 'v0.27.2', '1101f8f94896c563639a43a5fa1e7cc69d61cb13', {
        CONFIG: 'b8406415be7f29adda409e4a0317d23e9637da23090ad31d71c31e27c3239bb3',
        TRAINER: '54e1201a02fc53c0e3a3ff61e293680bd72b1064042fb57c645c0603384e4e53',
        UTILS: '0e41c7936722a20a9098c7346e90a4714fa57687641bb164e9d03190a31bb2fc',
    }),
    Release('v0.28.0', 'v0.28.0', '49ef33428c47235991acb4e185ea599b70c6dab4', {
        CONFIG: 'c3ec6744e27106fab22c4f50565e5eb8248b1dc2ce7581ccb9dfc1867767a8ca',
        TRAINER: '95b33424fc20b695715bfb4069b6cc966ca86cc79691303be3705142bee4230c',
        UTILS: '0e41c7936722a20a9098c7346e90a4714fa57687641bb164e9d03190a31bb2fc',
    }),
    Release('v0.29.0', 'v0.29.0', 'd24e19424da2837d435a7884c0b307b605413829', {
        CONFIG: 'f6f6dc5d9745fff2fad0bce5da18213e4b3e50ab4077c04645f69d944f07d20e',
        TRAINER: '7a112604cd51186c73817b4d00ac9e2d752d674b8e013581395b27732d9321c7',
        UTILS: 'e1a6acd42c169f731056bb02b14f0096008c6def977822f325c1a7bf1f645d1f',
    }),
    Release('v0.29.1', 'v0.29.1', '617406a4e69551c115c145114497999618d24f3c', {
        CONFIG: 'b7c25ea1a0c9c6f905882ceb1bf7f7b1d12efe76a0f43626ac7f9491e05f5098',
        TRAINER: '4dfc47d910cdc4c9319d040d0eeb37d68b92899bf3559c4301ea34dd982c0ee5',
        UTILS: 'e1a6acd42c169f731056bb02b14f0096008c6def977822f325c1a7bf1f645d1f',
    }),
    Release('v1.0.0', 'v1.0.0', 'f3e9ac1005980fded7192682599c70749785fa9b', {
        CONFIG: '2bf6fbb92b4e5eba9731c0c19e0098905429cf45f518c2e6f4f60e889216db26',
        TRAINER: 'f81245297bba0a1e0fcf0c49f92aceb719f471bd87d2be570301ef7e33f3a357',
        UTILS: '19a380c0eba215a0ec14531b1d05e6ebc1424e6d5f1f663d42c2591a7bf830ba',
    }),
    Release('v1.1.0', 'v1.1.0', '3179965b2d0621c1778f5a561302905837627b60', {
        CONFIG: '2bf6fbb92b4e5eba9731c0c19e0098905429cf45f518c2e6f4f60e889216db26',
        TRAINER: 'aa4a7ce6161c7feed71994a10030b3be7e421800c79e7c337a7d1d0b3858f4be',
        UTILS: '02251765b3808883ec035e354e680d18fbbacbcf93334fff6aaf2feb580aaddc',
    }),
    Release('v1.2.0', 'v1.2.0', 'aca45154c8b6b1d9b0c06b674c0fa6bcfd9df051', {
        CONFIG: '1c342bb4afcc56224cdec752feba1fa11d2137aa0c4fe9c15e4e03d4d711095e',
        TRAINER: '4ac442a6d117838bf26fa3b786feb092c3953b2f9212081646db7fad9b356b41',
        UTILS: '02251765b3808883ec035e354e680d18fbbacbcf93334fff6aaf2feb580aaddc',
    }),
    Release('v1.3.0', 'v1.3.0', '9679645f145a60eec305be4d50aff7111e47fb91', {
        CONFIG: '1c342bb4afcc56224cdec752feba1fa11d2137aa0c4fe9c15e4e03d4d711095e',
        TRAINER: '91f5b5b81ee7bac24dec8d346f0fafedbb3239b9a4530249df8e474112bf509c',
        UTILS: 'acf1165f26a555d64d512e25fbcb1c2978df123b08efb35623127e84f68dd975',
    }),
    Release('v1.4.0', 'v1.4.0', '42d82914fa7cb20ddc49452a88445acba2c72805', {
        CONFIG: '8f752c3ade682905938937315d43d7526c08311ff40f49fb25bde50090c5741d',
        TRAINER: '3945134144c8c9bd0b9051c8aea563e06f390163e6ff01d0dd55513afd906f3c',
        UTILS: '8a347db9dcc7f59fc5685be8d774f50751de787f7931e7c1ac657d11f2762996',
    }),
    Release('v1.5.0', 'v1.5.0', 'bd1e73f0a86443d40ab8dc82b0cf8f8694246565', {
        CONFIG: '8f752c3ade682905938937315d43d7526c08311ff40f49fb25bde50090c5741d',
        TRAINER: '44db4ae7607c09267ff9f2d15190ffdeab65adecf04e55810dceeb68023552ad',
        UTILS: '8c87918e3e28d28e834313f5b94961e8ef6f0e9b9eb56e8a0aea1e7a7ea2fd72',
    }),
    Release('v1.5.1', 'v1.5.1', '32efb4b0dd5a69c9623f831adf4f8d9ed4ff4a23', {
        CONFIG: '8f752c3ade682905938937315d43d7526c08311ff40f49fb25bde50090c5741d',
        TRAINER: '44db4ae7607c09267ff9f2d15190ffdeab65adecf04e55810dceeb68023552ad',
        UTILS: '8c87918e3e28d28e834313f5b94961e8ef6f0e9b9eb56e8a0aea1e7a7ea2fd72',
    }),
    Release('v1.6.0', 'v1.6.0', '0dac440542c2ef9b575f56534f29f6fca1febe4a', {
        CONFIG: '5ae40ed6e516a7d3231db77318bb6c2b267c27ea6d54a9a6602c9f5772861965',
        TRAINER: '565530bf7a543da42a4ee4f77c32802a788429797d5648a56b5008239f6bb721',
        UTILS: '8c87918e3e28d28e834313f5b94961e8ef6f0e9b9eb56e8a0aea1e7a7ea2fd72',
    }),
    Release('v1.7.0', 'v1.7.0', '06b42c7e205437538d5fe3c39b53fdd911a46785', {
        CONFIG: '5c70375b229a5a32057780ded4c0156fab7ae33fb460110268138443a57bac02',
        TRAINER: '753bb34f17f6b8c679d112bd9c500793360c55928ee2b10ba122a3c578376bd9',
        UTILS: 'c44fbf50fa239548f6ecffe3c87af51c4b8fdd25e410ba4e74fa1872fcbc750d',
    }),
    Release('v1.7.1', 'v1.7.1', 'f279c2342c3c795256d382050cc17c928c96db61', {
        CONFIG: '5c70375b229a5a32057780ded4c0156fab7ae33fb460110268138443a57bac02',
        TRAINER: '67514eb150391ab1aead1b0037e8a175bbbd85e4f6e956aa9a0286d705adc732',
        UTILS: 'c44fbf50fa239548f6ecffe3c87af51c4b8fdd25e410ba4e74fa1872fcbc750d',
    }),
    Release('v1.8.0', 'v1.8.0', '95809b942eb5d11d0b06d749510d88be99230b73', {
        CONFIG: '5886f05d8c2df8d9c39a8a7e3e7f2c10c1548733d224005430957354b954f8a1',
        TRAINER: '52d9a6c1e298df35d0da4a6fa17874d750ee627f6ac15393c8860d74d1ba4917',
        UTILS: 'f5968ce2239a8b1d37294d6d6ffba25131075f07cfccef28649def51c01f1a6d',
    }),
    Release('v1.9.0', 'v1.9.0', '35def3ee000a87f6839e66f4b7749b06274ed1b3', {
        CONFIG: 'f53e8a30107d9c0a5fc64bac383731d070de52bdc811fc3fb91b2e217147ef38',
        TRAINER: '655d9ad98549290fd32381174bfca5cab9f849b839966edc9a4d3abe67dd97bc',
        UTILS: 'ebdf6145e76ca552cb323d074c9429d6ee9eb94d129dfd823385f8211a3f208f',
    }),
    Release('f2cd5771', None, 'f2cd57710ae345ea6428ae95363267fcf38a3dc8', {
        CONFIG: '1798ed3b68df8b774aec133183703599af073eb7b37e6fc2076878a8f6f7ae29',
        TRAINER: '655d9ad98549290fd32381174bfca5cab9f849b839966edc9a4d3abe67dd97bc',
        UTILS: 'ebdf6145e76ca552cb323d074c9429d6ee9eb94d129dfd823385f8211a3f208f',
    }),
)

FULL = ("v1.9.0", "f2cd5771")  # per-key cases (coverage item 2)
ERA = ("v0.16.0", "v0.17.0", "v0.19.0", "v0.20.0", "v0.21.0", "v0.22.0", "v0.22.1", "v0.23.0", "v0.26.0",
       "v1.8.0")  # one small set of non-default cases per era (coverage item 3)

# --------------------------------------------------------------------------------------
# Facts file and sources
# --------------------------------------------------------------------------------------


def read_facts() -> list[dict]:
    return load_facts(FACTS_FILE)["releases"]


def check_against_facts(facts: list[dict]) -> dict[str, dict]:
    """RELEASES must list exactly the facts file's releases, with the same commits and hashes."""
    if [f["label"] for f in facts] != [r.label for r in RELEASES]:
        raise SystemExit("RELEASES labels differ from trl.json")
    out = {}
    for fact, rel in zip(facts, RELEASES):
        if fact["commit"] != rel.commit or fact["tag"] != rel.tag:
            raise SystemExit(f"{rel.label}: commit/tag differ from trl.json")
        for f in fact["files"]:
            if rel.files.get(f["path"]) != f["sha256"]:
                raise SystemExit(f"{rel.label}: {f['path']} sha256 differs from trl.json")
        out[rel.label] = {k["key"]: k["default"] for k in fact["keys"]}
    return out


# --------------------------------------------------------------------------------------
# AST helpers
# --------------------------------------------------------------------------------------


def class_methods(tree: ast.Module, where: str) -> dict[str, ast.FunctionDef]:
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "GRPOTrainer"]
    if len(classes) != 1:
        raise SystemExit(f"{where}: expected one class GRPOTrainer")
    out: dict[str, ast.FunctionDef] = {}
    for n in classes[0].body:
        if isinstance(n, ast.FunctionDef):
            if n.name in out:
                raise SystemExit(f"{where}: GRPOTrainer.{n.name} defined twice")
            out[n.name] = n
    return out


def module_defs(tree: ast.Module) -> dict[str, ast.stmt]:
    out: dict[str, ast.stmt] = {}
    for n in tree.body:
        name = node_name(n)
        if name is not None and isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            out[name] = n
    return out


def utils_imports(tree: ast.Module) -> set[str]:
    names = set()
    for n in tree.body:
        if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module == "utils":
            names |= {a.asname or a.name for a in n.names}
    return names


def walk_no_nested(node: ast.AST):
    """ast.walk that does not enter nested function / class definitions."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop(0)
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(n))


def self_attrs(nodes: list[ast.AST], ctx: type = ast.Load) -> set[str]:
    return {n.attr for top in nodes for n in ast.walk(top) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name) and n.value.id == "self" and isinstance(n.ctx, ctx)}


def name_attrs(nodes: list[ast.AST], base: str) -> set[str]:
    return {n.attr for top in nodes for n in ast.walk(top) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name) and n.value.id == base}


def lines(node: ast.AST) -> str:
    return f"{node.lineno}-{node.end_lineno}" if node.end_lineno != node.lineno else f"{node.lineno}"


def exec_nodes(nodes: list[ast.stmt], namespace: dict, filename: str) -> None:
    _verl.exec_nodes(nodes, namespace, filename)


# --------------------------------------------------------------------------------------
# Stand-ins
# --------------------------------------------------------------------------------------

torch: Any = None  # set in main()


class MetricsSink:
    """Stand-in for GRPOTrainer._metrics: every item is the sink, append / assignment are dropped."""

    def __getitem__(self, key: Any) -> "MetricsSink":
        return self

    def __setitem__(self, key: Any, value: Any) -> None:
        pass

    def append(self, value: Any) -> None:
        pass


class AcceleratorStandIn:
    """num_processes identical processes: gather = P copies concatenated, reduce(sum) = P * x."""

    def __init__(self, processes: int) -> None:
        self.num_processes = processes
        self.process_index = 0
        self.is_main_process = True
        self.device = "cpu"
        self.sync_gradients = True

    def gather(self, x: Any) -> Any:
        if x.dim() == 0:
            return torch.stack([x] * self.num_processes)
        return torch.cat([x] * self.num_processes)

    gather_for_metrics = gather

    def reduce(self, x: Any, reduction: str = "sum") -> Any:
        if reduction != "sum":
            raise RuntimeError(f"reduce({reduction}) not modelled")
        return x * self.num_processes

    def pad_across_processes(self, x: Any, dim: int = 0, pad_index: Any = 0, pad_first: bool = False) -> Any:
        return x  # every process holds the same number of elements

    def unwrap_model(self, model: Any) -> Any:
        return model


class ModelStandIn:
    training = True


class RefModelStandIn:
    """The reference model (TRL creates one whenever beta != 0 and the model is not a PEFT model)."""

    training = False


class ControlStandIn:
    should_evaluate = False


class StateStandIn:
    global_step = 0


def identity_decorator(fn: Callable) -> Callable:
    return fn


def not_called(name: str) -> Callable:
    def fail(*_a: Any, **_k: Any) -> Any:
        raise RuntimeError(f"{name} is not modelled (liger kernel path)")
    return fail


class TrainerStandIn:
    """Base of the stand-in ``self``: the model forward returns rows of one float64 leaf."""

    _leaf: Any = None
    _entropies: Any = None
    _ref: Any = None
    _n_returned: int = 1
    _real_params: frozenset = frozenset()
    _width: int = 0

    def _logps_standin(self, model: Any, input_ids: Any, attention_mask: Any, logits_to_keep: int,
                       *args: Any, **kwargs: Any) -> Any:
        unknown = sorted(set(kwargs) - self._real_params)
        if unknown or len(args) > 1:
            raise AssertionError(f"model forward called with unknown arguments {unknown} / {len(args)} positional")
        if logits_to_keep != self._width:
            raise AssertionError("unexpected logits_to_keep")
        idx = input_ids[:, 0]
        if isinstance(model, RefModelStandIn):
            if torch.is_grad_enabled() or self._ref is None:
                raise AssertionError("reference forward outside no_grad / without ref log-probs")
            return self._ref.index_select(0, idx) if self._n_returned == 1 else (
                (self._ref.index_select(0, idx), None) if self._n_returned == 2 else
                (self._ref.index_select(0, idx), None, None))
        if not isinstance(model, ModelStandIn):
            raise AssertionError("unexpected model")
        logps = self._leaf.index_select(0, idx)
        if self._n_returned == 1:
            return logps
        ent = None
        if kwargs.get("compute_entropy", False):
            ent = (self._entropies.index_select(0, idx) if self._entropies is not None
                   else torch.zeros_like(logps).detach())
        return (logps, ent) if self._n_returned == 2 else (logps, ent, None)

    _get_per_token_logps = _logps_standin
    _get_per_token_logps_and_entropies = _logps_standin


MODEL_METHODS = ("_get_per_token_logps", "_get_per_token_logps_and_entropies")
NOT_CALLED_METHODS = ("compute_liger_loss",)
LIGER_ATTRS = ("_forward_redirection",)
TYPING_NAMES = ("Optional", "Union", "Any", "Sequence", "Callable", "TypeVar")
GLOBAL_STANDINS = ("torch", "math", "profiling_decorator", *TYPING_NAMES)

# TrainingArguments (transformers) attributes GRPOConfig.__post_init__ reads, fixed for every case.
TRAINING_ARGS = {
    "world_size": None,  # = num_processes of the case
    "eval_strategy": "no", "do_eval": False, "fp16": False, "parallelism_config": None,
    "auto_find_batch_size": False, "per_device_eval_batch_size": 8, "gradient_checkpointing_kwargs": None,
    "use_liger_kernel": False, "gradient_checkpointing": False,
}

STUBS = (
    "Only picked upstream definitions run; nothing of TRL, transformers or accelerate is imported. "
    "args = a namespace holding every GRPOConfig field of the release with its literal default (read "
    "with ast from grpo_config.py; non-literal defaults are Unresolved objects that raise when read), "
    "overlaid by the case's config keys, plus the TrainingArguments attributes the __post_init__ "
    "reads (gradient_accumulation_steps and per_device_train_batch_size from the world, world_size "
    "= num_processes, eval_strategy 'no', do_eval False, fp16 False, parallelism_config None, "
    "auto_find_batch_size False, per_device_eval_batch_size 8, use_liger_kernel False (a "
    "TrainingArguments field from v0.25 on), gradient_checkpointing False where GRPOConfig does not "
    "define it; packaging Version is a stand-in whose '<' is False, so v0.27.x's "
    "gradient_checkpointing_kwargs default (use_reentrant, no effect on the loss) is not applied) and num_generations := 2 (the "
    "advantages are given, so grouping does not reach the loss; 2 divides every generation batch "
    "recorded). GRPOConfig.__post_init__ is executed on that namespace without its first "
    "super().__post_init__() statement (it derives steps_per_generation / generation_batch_size, maps "
    "the deprecated vllm_importance_sampling_cap to clip_max at late tags, and raises for invalid "
    "combinations). The stand-in self is a class holding the picked GRPOTrainer methods; every "
    "attribute they (and the picked generation statements) read is derived by evaluating the "
    "release's own __init__ assignment 'self.X = <expr>' when exactly one such expression reads only "
    "args / already derived attributes (listed per release in provenance.releases[label]."
    "derived_attributes); the others are explicit: args; accelerator (num_processes identical "
    "processes: gather / gather_for_metrics = P copies concatenated, reduce(sum) = P * x, "
    "pad_across_processes = identity, sync_gradients True only on the last micro-batch of each "
    "gradient_accumulation_steps window); model (training = True); control.should_evaluate = False; "
    "state.global_step = 0; _metrics = a sink; current_gradient_accumulation_steps = the world's "
    "gradient_accumulation_steps; aux_loss_enabled = False (the stub model is not MoE); tools = [] "
    "(no tools); ref_model = a reference-model stand-in when beta != 0 (else None), whose forward "
    "(v0.18.x compute the reference log-probs inside _compute_loss under torch.no_grad) returns rows "
    "of ref_logprobs; _forward_redirection / compute_liger_loss raise (liger kernel off). "
    "The release's __init__ 'if <test>: raise ...' checks whose tests read only loss-relevant args / "
    "derived attributes are executed too. _get_per_token_logps / _get_per_token_logps_and_entropies "
    "(the model forward) return rows input_ids[:, 0] of one float64 leaf tensor of log-probs (prompt_ids "
    "carry the row index), with the batch's entropies (zeros without grad for the builtin batch, "
    "whose cases never read them) when compute_entropy, as a 1-, 2- or 3-tuple as the real method "
    "returns; every keyword passed must be a parameter of the real method. profiling_decorator is the "
    "identity. nanmin / nanmax / get_high_entropy_mask / split_tensor_dict are picked from "
    "grpo_trainer.py or trl/trainer/utils.py, wherever the release defines them."
)

# --------------------------------------------------------------------------------------
# Loading one release
# --------------------------------------------------------------------------------------

LOSS_KEYS = (
    "beta", "epsilon", "epsilon_high", "delta", "loss_type", "importance_sampling_level", "num_iterations",
    "steps_per_generation", "generation_batch_size", "max_completion_length", "top_entropy_quantile",
    "entropy_coef", "use_adaptive_entropy", "entropy_coef_min", "entropy_coef_max", "entropy_coef_delta",
    "entropy_target", "off_policy_mask_threshold", "use_bias_correction_kl", "use_vllm",
    "vllm_importance_sampling_correction", "vllm_importance_sampling_mode", "vllm_importance_sampling_cap",
    "vllm_importance_sampling_clip_min", "vllm_importance_sampling_clip_max", "sapo_temperature_pos",
    "sapo_temperature_neg", "vespo_k_pos", "vespo_lambda_pos", "vespo_k_neg", "vespo_lambda_neg",
    "use_liger_loss", "use_liger_kernel", "gradient_accumulation_steps", "per_device_train_batch_size",
    "mask_truncated_completions", "router_aux_loss_coef",
)
EXPLICIT_ATTRS = ("args", "accelerator", "model", "control", "state", "_metrics",
                  "current_gradient_accumulation_steps", "aux_loss_enabled", "tools", "ref_model",
                  *LIGER_ATTRS)
IS_LOCALS = ("completion_mask", "old_per_token_logps", "sampling_per_token_logps", "self", "tool_mask", "torch",
             "math")


@dataclasses.dataclass
class Loaded:
    rel: Release
    sources: dict
    fields: dict  # GRPOConfig field -> literal default (or Unresolved)
    trainer_cls: type  # stand-in class holding the picked methods
    entry: str  # "compute_loss" or "v014"
    v014: Optional[Callable]
    n_returned: int
    real_params: frozenset
    needed_attrs: list  # self attributes read by picked code, in order
    init_exprs: dict  # attr -> ast.expr (the one evaluable __init__ assignment)
    init_checks: list  # ast.If nodes of __init__ executed per case
    post_init: Optional[Callable]
    old_cond: Optional[tuple]  # (generate_every Assign or None, If test) from the generation method
    is_node: Optional[ast.If]
    is_var: Optional[str]
    split_arg: Optional[ast.expr]  # second argument of split_tensor_dict in _prepare_inputs
    split_fn: Optional[Callable]
    out_literal: set
    out_conditional: set
    ref_gated: bool
    mask_dtype: Any
    trainer_divides: bool  # True: upstream passes compute_loss_func (v0.22+); False: transformers divides by GA
    picked: list
    derived: dict
    loss_types: list
    is_modes: list
    notes: list


def parse(sources: dict, rel: Release, path: str) -> tuple[ast.Module, str]:
    name = f"huggingface/trl@{rel.commit[:8]}/{path}"
    return ast.parse(sources[path], filename=name), name


def resolve_globals(nodes: list[ast.AST], trees: dict, picked: list, where: str) -> dict[str, list]:
    """Module-level definitions (per file) the nodes read, closed over; the rest must be stand-ins."""
    trainer_tree, utils_tree = trees[TRAINER], trees[UTILS]
    tdefs, udefs, from_utils = module_defs(trainer_tree), module_defs(utils_tree), utils_imports(trainer_tree)
    chosen: dict[str, dict[str, ast.stmt]] = {TRAINER: {}, UTILS: {}}
    todo = sorted(free_names(nodes))
    while todo:
        name = todo.pop(0)
        if name in chosen[TRAINER] or name in chosen[UTILS]:
            continue
        if name in tdefs:
            path, node = TRAINER, tdefs[name]
        elif name in from_utils and name in udefs:
            path, node = UTILS, udefs[name]
        elif name in GLOBAL_STANDINS:
            continue
        else:
            raise SystemExit(f"{where}: picked code reads {name!r}, which is neither picked nor a stand-in")
        chosen[path][name] = node
        for dep in sorted(free_names([node])):
            if path == UTILS and dep in udefs:
                todo.append(dep)
            elif path == UTILS and dep not in GLOBAL_STANDINS:
                raise SystemExit(f"{where}: utils.{name} reads {dep!r}")
            else:
                todo.append(dep)
    out = {}
    for path in (UTILS, TRAINER):
        nodes_ = sorted(chosen[path].values(), key=lambda n: n.lineno)
        out[path] = nodes_
        picked += [f"{path}:{node_name(n)} (lines {lines(n)})" for n in nodes_]
    return out


def base_namespace(name: str) -> dict:
    ns = {"__name__": name, "torch": torch, "math": math, "profiling_decorator": identity_decorator}
    for t in TYPING_NAMES:
        ns[t] = getattr(typing, t)
    return ns


def exec_module_nodes(chosen: dict, rel: Release) -> dict:
    uns = base_namespace("trl.trainer.utils")
    exec_nodes(chosen[UTILS], uns, f"huggingface/trl@{rel.commit[:8]}/{UTILS}")
    tns = base_namespace("trl.trainer.grpo_trainer")
    for n in chosen[UTILS]:
        tns[node_name(n)] = uns[node_name(n)]
    exec_nodes(chosen[TRAINER], tns, f"huggingface/trl@{rel.commit[:8]}/{TRAINER}")
    return tns


def v014_statements(fn: ast.FunctionDef, where: str) -> tuple[ast.FunctionDef, list[str]]:
    """v0.14.0: the loss statements of compute_loss (which also generates and scores)."""
    body = fn.body
    def assigns(stmt: ast.stmt, name: str) -> bool:
        return isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)
    kl = [s for s in body if assigns(s, "per_token_kl")]
    ptl = [i for i, s in enumerate(body) if assigns(s, "per_token_loss")]
    loss = [i for i, s in enumerate(body) if assigns(s, "loss")]
    ret = body[-1]
    if len(kl) != 1 or len(ptl) != 2 or len(loss) != 1 or ptl[1] != ptl[0] + 1 or loss[0] != ptl[1] + 1 \
            or not (isinstance(ret, ast.Return) and isinstance(ret.value, ast.Name) and ret.value.id == "loss"):
        raise SystemExit(f"{where}: v0.14 statement layout not recognised")
    stmts = [kl[0], body[ptl[0]], body[ptl[1]], body[loss[0]], ret]
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=a) for a in (
        "self", "per_token_logps", "ref_per_token_logps", "completion_mask", "advantages")],
        kwonlyargs=[], kw_defaults=[], defaults=[])
    new = ast.FunctionDef(name="compute_loss_v014", args=args, body=[copy.deepcopy(s) for s in stmts],
                          decorator_list=[], returns=None, type_comment=None, lineno=stmts[0].lineno, col_offset=0,
                          end_lineno=stmts[-1].end_lineno, end_col_offset=0)
    ast.fix_missing_locations(new)
    return new, [f"line {s.lineno}" if s.lineno == s.end_lineno else f"lines {s.lineno}-{s.end_lineno}"
                 for s in stmts]


def init_assignments(init: ast.FunctionDef) -> dict[str, list[ast.expr]]:
    out: dict[str, list[ast.expr]] = {}
    for n in walk_no_nested(init):
        if isinstance(n, (ast.Assign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    if n.value is not None:
                        out.setdefault(t.attr, []).append(n.value)
    return out


def raise_only(stmts: list[ast.stmt]) -> bool:
    if not stmts:
        return True
    for s in stmts:
        if isinstance(s, ast.Raise):
            continue
        if isinstance(s, ast.If) and raise_only(s.body) and raise_only(s.orelse):
            continue
        return False
    return True


def find_gen_method(methods: dict) -> tuple[Optional[ast.FunctionDef], Optional[ast.Dict]]:
    best = None
    for m in methods.values():
        for n in walk_no_nested(m):
            if isinstance(n, ast.Dict):
                keys = {k.value for k in n.keys if isinstance(k, ast.Constant)}
                if {"completion_mask", "advantages", "prompt_ids"} <= keys:
                    if best is not None and best[0] is not m:
                        raise SystemExit(f"two generation methods: {best[0].name}, {m.name}")
                    best = (m, n)
    return best if best else (None, None)


def load_release(rel: Release, sources: dict, facts: dict) -> Loaded:
    picked: list[str] = []
    notes: list[str] = []
    trees = {}
    names = {}
    for path in (TRAINER, CONFIG, UTILS):
        trees[path], names[path] = parse(sources, rel, path)
    methods = class_methods(trees[TRAINER], names[TRAINER])
    fields = dataclass_fields(trees[CONFIG], "GRPOConfig", names[CONFIG])
    for key, default in facts.items():
        if key not in fields or (not isinstance(fields[key], Unresolved) and fields[key] != default):
            raise SystemExit(f"{rel.label}: GRPOConfig.{key} default {fields.get(key)!r} differs from trl.json")

    # ---- the loss methods
    entry_node = methods["compute_loss"]
    v014 = None
    method_nodes: dict[str, ast.FunctionDef] = {}
    if any(isinstance(n, ast.FunctionDef) and n.name == "get_per_token_logps" for n in ast.walk(entry_node)):
        entry = "v014"
        fn, where_lines = v014_statements(entry_node, names[TRAINER])
        method_nodes["compute_loss_v014"] = fn
        picked.append(f"{TRAINER}:GRPOTrainer.compute_loss statements {', '.join(where_lines)} only (as a "
                      "function of self, per_token_logps, ref_per_token_logps, completion_mask, advantages)")
    else:
        entry = "compute_loss"
        todo = ["compute_loss"]
        while todo:
            name = todo.pop(0)
            if name in method_nodes:
                continue
            method_nodes[name] = methods[name]
            for attr in sorted(self_attrs([methods[name]])):
                if attr in methods and attr not in MODEL_METHODS and attr not in NOT_CALLED_METHODS:
                    todo.append(attr)
        for name, node in method_nodes.items():
            picked.append(f"{TRAINER}:GRPOTrainer.{name} (lines {lines(node)})")
    model_method = [m for m in MODEL_METHODS if m in methods]
    real_params: frozenset = frozenset()
    n_returned = 0
    if entry != "v014":  # v0.14.0: the loss statements receive per_token_logps directly
        if len(model_method) != 1:
            raise SystemExit(f"{rel.label}: model forward method not found")
        real = methods[model_method[0]]
        real_params = frozenset(a.arg for a in real.args.args + real.args.kwonlyargs) - {"self"}
        rets = {len(r.value.elts) if isinstance(r.value, ast.Tuple) else 1
                for r in ast.walk(real) if isinstance(r, ast.Return) and r.value is not None}
        if len(rets) != 1:
            raise SystemExit(f"{rel.label}: {model_method[0]} returns {rets}")
        n_returned = rets.pop()

    # ---- the generation-side statements
    gen, out_dict = find_gen_method(methods)
    old_cond = None
    is_node = None
    is_var = None
    out_literal: set = set()
    out_conditional: set = set()
    ref_gated = False
    mask_dtype = torch.int32
    gen_nodes: list[ast.AST] = []
    if gen is not None:
        out_literal = {k.value for k in out_dict.keys if isinstance(k, ast.Constant)}
        for n in walk_no_nested(gen):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Subscript) \
                    and isinstance(n.targets[0].value, ast.Name) and n.targets[0].value.id == "output" \
                    and isinstance(n.targets[0].slice, ast.Constant):
                out_conditional.add(n.targets[0].slice.value)
                if n.targets[0].slice.value == "importance_sampling_ratio":
                    is_var = ast.unparse(n.value)
            if isinstance(n, ast.If) and ast.unparse(n.test) in ("self.beta == 0.0", "self.beta != 0.0"):
                if "ref_per_token_logps" in ast.unparse(n):
                    ref_gated = True
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "completion_mask"
                                                 for t in n.targets) and isinstance(n.value, ast.ListComp):
                if "dtype=torch.long" in ast.unparse(n.value):
                    mask_dtype = torch.long
        ifs = [n for n in walk_no_nested(gen) if isinstance(n, ast.If) and n.body
               and isinstance(n.body[0], ast.Assign) and any(
                   (isinstance(t, ast.Name) and t.id == "old_per_token_logps")
                   or (isinstance(t, ast.Tuple) and any(isinstance(e, ast.Name) and e.id == "old_per_token_logps"
                                                        for e in t.elts)) for t in n.body[0].targets)]
        if len(ifs) > 1:
            raise SystemExit(f"{rel.label}: several old_per_token_logps conditions")
        if ifs:
            test = ifs[0].test
            ge = None
            if "generate_every" in {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}:
                cands = [n for n in walk_no_nested(gen) if isinstance(n, ast.Assign) and n.lineno < ifs[0].lineno
                         and any(isinstance(t, ast.Name) and t.id == "generate_every" for t in n.targets)]
                ge = max(cands, key=lambda n: n.lineno)
                gen_nodes.append(ge)
            old_cond = (ge, test)
            gen_nodes.append(test)
            picked.append(f"{TRAINER}:GRPOTrainer.{gen.name} old_per_token_logps condition "
                          + (f"(line {ge.lineno}: generate_every; " if ge else "(")
                          + f"line {test.lineno}: `{ast.unparse(test)}`, evaluated)")
        cands = [n for n in walk_no_nested(gen) if isinstance(n, ast.If)
                 and ast.unparse(n.test) == "self.use_vllm and self.vllm_importance_sampling_correction"
                 and any(isinstance(s, ast.Assign) and ast.unparse(s.value).startswith("torch.exp(")
                         for s in n.body)]
        if len(cands) > 1:
            raise SystemExit(f"{rel.label}: several IS-ratio blocks")
        if cands:
            is_node = cands[0]
            extra = free_names([is_node]) - set(IS_LOCALS)
            if extra:
                raise SystemExit(f"{rel.label}: IS block reads {sorted(extra)}")
            gen_nodes.append(is_node)
            if is_var is None:
                raise SystemExit(f"{rel.label}: IS ratio output key not found")
            picked.append(f"{TRAINER}:GRPOTrainer.{gen.name} vLLM importance-sampling block (lines "
                          f"{lines(is_node)}, executed; result {is_var} -> inputs['importance_sampling_ratio'])")
        picked.append(f"{TRAINER}:GRPOTrainer.{gen.name} output dict keys (line {out_dict.lineno}: literal "
                      f"{sorted(out_literal)}; conditional {sorted(out_conditional)}) (names only)")
    prep = methods.get("_prepare_inputs")
    split_arg = None
    split_nodes: list = []
    if prep is not None:
        calls = [n for n in ast.walk(prep) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                 and n.func.id == "split_tensor_dict"]
        if len(calls) > 1:
            raise SystemExit(f"{rel.label}: several split_tensor_dict calls")
        if calls:
            split_arg = calls[0].args[1]
            split_nodes.append(ast.Expr(value=ast.Call(func=ast.Name(id="split_tensor_dict", ctx=ast.Load()),
                                                       args=[], keywords=[])))
            picked.append(f"{TRAINER}:GRPOTrainer._prepare_inputs split count (line {calls[0].lineno}: "
                          f"`{ast.unparse(split_arg)}`, evaluated)")

    # ---- module-level definitions read
    all_nodes = list(method_nodes.values()) + gen_nodes + split_nodes
    chosen = resolve_globals(list(method_nodes.values()) + split_nodes, trees, picked, rel.label)
    tns = exec_module_nodes(chosen, rel)
    ns = dict(tns)
    exec_nodes(list(method_nodes.values()), ns, names[TRAINER])
    attrs = {name: ns[name] for name in method_nodes}
    for m in MODEL_METHODS:
        attrs.pop(m, None)
    for m in NOT_CALLED_METHODS:
        attrs[m] = not_called(m)
    trainer_cls = type("GRPOTrainer", (TrainerStandIn,), attrs)
    split_fn = tns.get("split_tensor_dict") if split_arg is not None else None

    # ---- self attributes and their __init__ derivations
    read = self_attrs(all_nodes) | (self_attrs([methods["_prepare_inputs"]]) & {"args"} if prep else set())
    read -= set(method_nodes) | set(MODEL_METHODS) | set(NOT_CALLED_METHODS)
    init = methods["__init__"]
    assigns = init_assignments(init)
    init_exprs: dict[str, ast.expr] = {}
    derived: dict[str, str] = {}

    def derive(attr: str, stack: tuple = ()) -> None:
        if attr in init_exprs or attr in EXPLICIT_ATTRS:
            return
        if attr in stack:
            raise SystemExit(f"{rel.label}: cyclic derivation of self.{attr}")
        exprs = {ast.unparse(e): e for e in assigns.get(attr, [])}
        good = {}
        for text, e in exprs.items():
            if free_names([e]) <= {"args", "self"}:
                good[text] = e
        if len(good) != 1:
            raise SystemExit(f"{rel.label}: self.{attr}: no single evaluable __init__ assignment ({sorted(exprs)})")
        (text, e), = good.items()
        for dep in sorted(self_attrs([e])):
            derive(dep, stack + (attr,))
        init_exprs[attr] = e
        derived[attr] = f"{text} (line {e.lineno})"

    for attr in sorted(read):
        derive(attr)
    init_checks: list = []

    def evaluable(test: ast.expr) -> bool:
        args_read = name_attrs([test], "args")
        self_read = self_attrs([test])
        return (free_names([test]) <= {"args", "self"} and args_read <= set(LOSS_KEYS)
                and self_read <= set(init_exprs) and bool(args_read or self_read))

    def scan(stmts: list, conds: tuple) -> None:
        for st in stmts:
            if not isinstance(st, ast.If):
                continue
            if not evaluable(st.test):
                continue  # neither this check nor anything nested under it
            if raise_only(st.body) and raise_only(st.orelse) and st.body:
                init_checks.append((conds, st))
                continue
            scan(st.body, conds + ((True, st.test),))
            scan(st.orelse, conds + ((False, st.test),))

    scan(init.body, ())
    if init_checks:
        picked.append(f"{TRAINER}:GRPOTrainer.__init__ raise-only checks at lines "
                      f"{', '.join(str(n.lineno) for _, n in init_checks)} (executed when their enclosing "
                      "if-tests, all on loss-relevant args, hold)")

    # ---- GRPOConfig.__post_init__
    cfg_methods = [n for n in trees[CONFIG].body if isinstance(n, ast.ClassDef) and n.name == "GRPOConfig"][0].body
    post = [n for n in cfg_methods if isinstance(n, ast.FunctionDef) and n.name == "__post_init__"]
    post_init = None
    if post:
        fn = copy.deepcopy(post[0])
        body = [s for s in fn.body if not (isinstance(s, ast.Expr) and ast.unparse(s) == "super().__post_init__()")]
        if len(body) != len(fn.body) - 1:
            raise SystemExit(f"{rel.label}: __post_init__ without one super().__post_init__() statement")
        fn.body = body
        fn.decorator_list = []
        pns = {"__name__": "trl.trainer.grpo_config", "warnings": WarningsStandIn, "math": math,
               "Version": VersionStandIn, "transformers": types.SimpleNamespace(__version__="(not modelled)")}
        exec_nodes([fn], pns, names[CONFIG])
        post_init = pns["__post_init__"]
        picked.append(f"{CONFIG}:GRPOConfig.__post_init__ (lines {lines(post[0])}, without super().__post_init__())")
    picked.append(f"{CONFIG}:GRPOConfig (field defaults only)")

    # ---- GA division: transformers' Trainer.training_step divides unless compute_loss_func is passed
    supers = [n for n in ast.walk(init) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and n.func.attr == "__init__" and isinstance(n.func.value, ast.Call)
              and isinstance(n.func.value.func, ast.Name) and n.func.value.func.id == "super"]
    if len(supers) != 1:
        raise SystemExit(f"{rel.label}: super().__init__ call not found")
    trainer_divides = any(k.arg == "compute_loss_func" for k in supers[0].keywords)
    mak = [e for e in assigns.get("model_accepts_loss_kwargs", [])]
    if [ast.unparse(e) for e in mak] != ["False"]:
        raise SystemExit(f"{rel.label}: model_accepts_loss_kwargs is not set to False once")
    if "training_step" in methods:
        ts = methods["training_step"]
        if "super().training_step(model, inputs, num_items_in_batch)" not in ast.unparse(ts):
            raise SystemExit(f"{rel.label}: training_step does not call super().training_step")

    loss_types: list[str] = []
    for m in method_nodes.values():
        for n in ast.walk(m):
            if isinstance(n, ast.Compare) and ast.unparse(n.left) == "self.loss_type":
                for c in n.comparators:
                    vals = [c.value] if isinstance(c, ast.Constant) else [
                        e.value for e in getattr(c, "elts", []) if isinstance(e, ast.Constant)]
                    for v in vals:
                        if v not in loss_types:
                            loss_types.append(v)
    is_modes: list[str] = []
    if is_node is not None:
        for n in ast.walk(is_node):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.endswith(("_mask", "_truncate")):
                if n.value not in is_modes:
                    is_modes.append(n.value)
    ld = Loaded(rel, sources, fields, trainer_cls, entry, None, n_returned, real_params, sorted(read), init_exprs,
                init_checks, post_init, old_cond, is_node, is_var, split_arg, split_fn, out_literal, out_conditional,
                ref_gated, mask_dtype, trainer_divides, picked, derived, loss_types, is_modes, notes)
    if entry == "v014":
        ld.v014 = ns["compute_loss_v014"]
    return ld


class VersionStandIn:
    """Stand-in for packaging.version.Version: every '<' comparison is False (see STUBS)."""

    def __init__(self, _text: str) -> None:
        pass

    def __lt__(self, _other: Any) -> bool:
        return False


class WarningsStandIn:
    @staticmethod
    def warn(*_a: Any, **_k: Any) -> None:
        pass

# --------------------------------------------------------------------------------------
# Running one case
# --------------------------------------------------------------------------------------


class UpstreamRaised(Exception):
    pass


def make_args(ld: Loaded, config: dict, world: dict, rows: int) -> types.SimpleNamespace:
    values = dict(ld.fields)
    for key, value in config.items():
        if key not in values and key not in ("gradient_accumulation_steps", "per_device_train_batch_size"):
            raise SystemExit(f"{ld.rel.label}: unknown GRPOConfig key {key}")
        values[key] = value
    ga = world["gradient_accumulation_steps"]
    values["gradient_accumulation_steps"] = ga
    if "steps_per_generation" in ld.fields:
        spg = values["steps_per_generation"] if values["steps_per_generation"] is not None else ga
    elif ld.split_arg is not None:
        spg = ga
    else:
        spg = 1
    if rows % spg:
        raise SystemExit(f"{ld.rel.label}: {rows} rows do not split into {spg} micro-batches")
    values["per_device_train_batch_size"] = rows // spg
    values["num_generations"] = 2
    for key, value in TRAINING_ARGS.items():
        values.setdefault(key, value)
    values["world_size"] = world["num_processes"]
    args = types.SimpleNamespace(**values)
    if ld.post_init is not None:
        try:
            ld.post_init(args)
        except (ValueError, NotImplementedError) as exc:
            raise UpstreamRaised(f"GRPOConfig.__post_init__: {exc}") from None
    return args


def make_self(ld: Loaded, args: Any, world: dict) -> Any:
    fake = ld.trainer_cls()
    fake.args = args
    fake.accelerator = AcceleratorStandIn(world["num_processes"])
    fake.model = ModelStandIn()
    fake.control = ControlStandIn()
    fake.state = StateStandIn()
    fake._metrics = MetricsSink()
    fake.current_gradient_accumulation_steps = world["gradient_accumulation_steps"]
    fake.aux_loss_enabled = False
    fake.tools = []
    fake.ref_model = RefModelStandIn() if args.beta != 0.0 else None
    fake._forward_redirection = not_called("_forward_redirection")
    fake._n_returned = ld.n_returned
    fake._real_params = ld.real_params
    done: set = set()

    def setattr_derived(attr: str) -> None:
        if attr in done:
            return
        expr = ld.init_exprs[attr]
        for dep in sorted(self_attrs([expr])):
            if dep in ld.init_exprs:
                setattr_derived(dep)
        value = eval(compile(ast.Expression(body=expr), f"{ld.rel.label}:__init__", "eval"),  # noqa: S307
                     {"args": args, "self": fake, "__builtins__": __builtins__})
        setattr(fake, attr, value)
        done.add(attr)

    for attr in sorted(ld.init_exprs):
        setattr_derived(attr)
    ns = {"args": args, "self": fake}
    for conds, node in ld.init_checks:
        if not all(bool(eval_upstream(ld, test, ns, "eval")) == want for want, test in conds):
            continue
        code = compile(ast.Module(body=[node], type_ignores=[]), f"{ld.rel.label}:__init__", "exec")
        try:
            exec(code, ns)  # noqa: S102
        except (ValueError, NotImplementedError) as exc:
            raise UpstreamRaised(f"GRPOTrainer.__init__: {exc}") from None
    return fake


def eval_upstream(ld: Loaded, node: ast.AST, ns: dict, mode: str) -> Any:
    if mode == "eval":
        return eval(compile(ast.Expression(body=node), ld.rel.label, "eval"), ns)  # noqa: S307
    exec(compile(ast.Module(body=[node], type_ignores=[]), ld.rel.label, "exec"), ns)  # noqa: S102
    return None


def run_case(ld: Loaded, config: dict, world: dict, b: dict) -> dict:
    lp0, mask = b["lp"], b["mask"]
    rows, width = lp0.shape
    procs, ga = world["num_processes"], world["gradient_accumulation_steps"]
    args = make_args(ld, config, world, rows)
    fake = make_self(ld, args, world)
    leaf = lp0.detach().clone().requires_grad_(True)
    fake._leaf = leaf
    fake._entropies = b["ent"]
    fake._ref = b["ref"]
    fake._width = width
    comp_mask = mask.to(ld.mask_dtype)
    info: dict[str, Any] = {"num_items_in_batch": None}

    if ld.entry == "v014":
        loss = ld.v014(fake, leaf, b["ref"], comp_mask, b["adv_row"])
        loss = loss / ga  # transformers Trainer.training_step (model_accepts_loss_kwargs False)
        value = float(loss.detach().item())
        loss.backward()
        info.update(old_computed=False, ref_computed=True, micro=[{"rows": list(range(rows)), "loss": value}])
        return finish(leaf, value, info)

    # ---- what _generate_and_score_completions puts in the batch
    old_computed = False
    if ld.old_cond is not None:
        ns = {"self": fake}
        ge, test = ld.old_cond
        if ge is not None:
            eval_upstream(ld, ge, ns, "exec")
        old_computed = bool(eval_upstream(ld, test, ns, "eval"))
    ref_computed = (args.beta != 0.0) if ld.ref_gated else True
    if "ref_per_token_logps" not in ld.out_literal | ld.out_conditional:
        ref_computed = None  # v0.18.x: computed inside _compute_loss from self.ref_model
    use_vllm = bool(getattr(args, "use_vllm", False))
    if use_vllm and b["rollout"] is None:
        raise SystemExit("vLLM cases need a rollout_logprobs stream")
    old = b["old"] if old_computed else None
    is_ratio = None
    if ld.is_node is not None and fake.use_vllm and fake.vllm_importance_sampling_correction:
        ns = {"completion_mask": comp_mask, "old_per_token_logps": old, "sampling_per_token_logps": b["rollout"],
              "self": fake, "tool_mask": None, "torch": torch, "math": math}
        if old is None:
            raise SystemExit("IS ratio without old log-probs")
        try:
            eval_upstream(ld, ld.is_node, ns, "exec")
        except (ValueError, NotImplementedError) as exc:
            raise UpstreamRaised(f"_generate_and_score_completions: {exc}") from None
        is_ratio = ns[ld.is_var]
    inputs: dict[str, Any] = {
        "prompt_ids": torch.arange(rows, dtype=torch.long)[:, None],
        "prompt_mask": torch.ones(rows, 1, dtype=torch.long),
        "completion_ids": torch.zeros(rows, width, dtype=torch.long),
        "completion_mask": comp_mask,
        "advantages": b["adv_row"],
    }
    keys = ld.out_literal | ld.out_conditional
    if "old_per_token_logps" in ld.out_literal or (old is not None and "old_per_token_logps" in keys):
        inputs["old_per_token_logps"] = old
    ref = b["ref"] if ref_computed else None
    if "ref_per_token_logps" in ld.out_literal or (ref is not None and "ref_per_token_logps" in keys):
        inputs["ref_per_token_logps"] = ref
    if "num_items_in_batch" in keys:
        inputs["num_items_in_batch"] = torch.tensor(procs * int(comp_mask.sum().item()), dtype=torch.long)
        info["num_items_in_batch"] = procs * int(comp_mask.sum().item())
    if is_ratio is not None:
        inputs["importance_sampling_ratio"] = is_ratio
    if use_vllm and "sampling_per_token_logps" in keys:
        inputs["sampling_per_token_logps"] = b["rollout"]
    unknown = ld.out_literal - {"prompt_ids", "prompt_mask", "completion_ids", "completion_mask", "advantages",
                                "old_per_token_logps", "ref_per_token_logps", "num_items_in_batch"}
    if unknown:
        raise SystemExit(f"{ld.rel.label}: output dict has unmodelled keys {sorted(unknown)}")

    # ---- split into micro-batches (upstream split_tensor_dict, rows presented in the cut order)
    if ld.split_arg is not None:
        k = int(eval_upstream(ld, ld.split_arg, {"self": fake}, "eval"))
        chunks = ld.split_fn(inputs, k)
    else:
        chunks = [inputs]
    micro = []
    total = 0.0
    for i, chunk in enumerate(chunks):
        fake.accelerator.sync_gradients = (i + 1) % ga == 0 or i == len(chunks) - 1
        try:
            loss = fake.compute_loss(fake.model, chunk, num_items_in_batch=None)
        except (ValueError, NotImplementedError) as exc:
            raise UpstreamRaised(f"compute_loss: {exc}") from None
        if not ld.trainer_divides:
            loss = loss / ga  # transformers Trainer.training_step (model_accepts_loss_kwargs False)
        value = float(loss.detach().item())
        loss.backward()
        micro.append({"rows": [int(r) for r in chunk["prompt_ids"][:, 0]], "loss": value})
        total += value
    expect = [list(range(j, j + rows // len(chunks))) for j in range(0, rows, rows // len(chunks))]
    if [m["rows"] for m in micro] != expect:
        raise SystemExit(f"micro-batches {[m['rows'] for m in micro]}, expected {expect}")
    info.update(old_computed=old_computed, ref_computed=ref_computed, micro=micro)
    return finish(leaf, total, info)


def finish(leaf: Any, total: float, info: dict) -> dict:
    grad = leaf.grad.detach().clone() if leaf.grad is not None else torch.zeros_like(leaf).detach()
    return {"loss": total, "grad": grad, **info}

# --------------------------------------------------------------------------------------
# Batches
# --------------------------------------------------------------------------------------

EXTRA_EDGES = (1.1,)  # epsilon = 0.1 cases: clamp(0.9, 1.1); the verl rule already avoids the rest
OPM_THRESHOLD = 0.05  # off_policy_mask_threshold of the recorded cases (checked 1e-9 away from every row's KL)

BATCH_RULE = (
    "Every case is ONE GENERATION BATCH OF ONE PROCESS (B rows; with num_processes > 1 every process "
    "holds the same batch). Streams are [B, T] float64, right-padded; advantages are [B] (one per row, "
    "TRL's shape, unsqueezed upstream). 'builtin' is test/fixtures/polgrad/which_example.json key "
    "'batch' (B=4, T=8; logprobs / old_logprobs at padding used as stored; ref_logprobs := "
    "old_logprobs; no entropies, no rollout_logprobs). Random batches random0 (B=4), random1 (B=6), "
    "random_empty (B=4, one row emptied) follow tools/record-fixtures/verlReleases.py's draw rule "
    "exactly (draw_random, imported), under the names 'trl-releases/random0' etc.: seed = "
    "zlib.crc32(name) & 0x7FFFFFFF, attempt k >= 1 uses crc32(name + ':' + str(k)); torch.Generator; "
    "T = randint(5..8); L_b = randint(1..T); logprobs = U[-3, -0.5]; old = logprobs + 0.3 N; ref = "
    "logprobs + 0.1 N; rollout_logprobs = old + 0.05 N; advantages N(0,1) [B]; entropies U[0.1, 3]; "
    "every stream 0.0 at padding; rejection unless some row has 0 < L < T, old/ref/rollout < -0.01 at "
    "response tokens, a token with A > 0 and ratio > 1.2 and one with A < 0 and ratio < 0.8, and token "
    "ratios exp(lp - old), sequence-mean ratios and rollout IS ratios exp(old - rollout) (token and "
    "row-sum) more than 1e-9 away from 0.8, 0.9, 1.2, 1.28, 1.5, 2.0, 3.0, 0.95, 1/1.05, 1.05. This "
    "recorder additionally asserts token / sequence-mean ratios are 1e-9 away from 1.1 and every row's "
    "mean KL (sampling - lp) is 1e-9 away from the off-policy-mask threshold 0.05. Inputs passed to "
    "TRL: completion_mask = response_mask in the dtype the release's generation builds (torch.int32 "
    "from '.int()' until the padded torch.long mask appears; see provenance.releases[label].mask_dtype); "
    "prompt_ids [B, 1] long holding the row index, prompt_mask ones, completion_ids zeros; advantages; "
    "old_per_token_logps = old_logprobs only when the release's condition says TRL computes them "
    "(else None or absent, exactly as the output dict of the release has it); ref_per_token_logps = "
    "ref_logprobs when TRL computes them (beta != 0, or always before the beta gate existed); "
    "num_items_in_batch = num_processes * sum(completion_mask) of the generation batch (int64 0-dim "
    "tensor; only where the release's output dict has the key); with use_vllm: sampling logprobs = "
    "rollout_logprobs, importance_sampling_ratio = the release's own block run on them, "
    "sampling_per_token_logps = rollout_logprobs where the output dict has the key. Rows are presented "
    "already in the order TRL's split_tensor_dict cuts them (shuffle_sequence_dict is not modelled): "
    "micro-batch j holds rows j*B/K .. (j+1)*B/K - 1, K = the release's split count "
    "(steps_per_generation, or gradient_accumulation_steps at v0.17.0; 1 before v0.17.0, when every "
    "micro-step generates its own batch). Recorded numbers: loss = sum over the K micro-batches, in "
    "order, of the scalar passed to backward (the compute_loss value, divided by "
    "gradient_accumulation_steps by transformers where the release leaves that to the Trainer); "
    "grad_logprobs = d loss / d logprobs accumulated by those backward calls on one float64 leaf, "
    "[B, T], zeros at padding (possibly -0.0); micro_batches = each micro-batch's rows and backward "
    "loss. num_iterations > 1: one pass over the generation batch is recorded (the batch's logprobs "
    "stand for the current policy at that pass). Entropies carry no gradient (in a real model they "
    "depend on the logits; that path is not in grad_logprobs). No optimizer-side clipping."
)


def draw_batches() -> dict:
    _verl.torch = torch
    raw = {"builtin": _verl.load_builtin(),
           "random0": _verl.draw_random("trl-releases/random0", 4, False),
           "random1": _verl.draw_random("trl-releases/random1", 6, False),
           "random_empty": _verl.draw_random("trl-releases/random_empty", 4, True)}
    for name, b in raw.items():
        mask = b["mask"]
        z = torch.where(mask, b["lp"] - b["old"], torch.zeros((), dtype=torch.float64))
        lens = mask.sum(-1).clamp(min=1)
        probes = torch.cat([torch.exp(z)[mask], torch.exp(z.sum(-1) / lens)])
        for e in EXTRA_EDGES:
            if bool((probes - e).abs().min() <= 1e-9):
                raise SystemExit(f"{name}: a ratio lies within 1e-9 of {e}")
        for sampling in ([b["old"]] + ([b["rollout"]] if b["rollout"] is not None else [])):
            kl = (torch.where(mask, sampling - b["lp"], torch.zeros((), dtype=torch.float64)).sum(-1) / lens)
            if bool((kl - OPM_THRESHOLD).abs().min() <= 1e-9):
                raise SystemExit(f"{name}: a row KL lies within 1e-9 of {OPM_THRESHOLD}")
    return raw


# --------------------------------------------------------------------------------------
# Case lists
# --------------------------------------------------------------------------------------

STD = ("builtin", "random0", "random1")
RND = ("random0", "random1")


def case_specs(ld: Loaded) -> list[tuple[str, dict, dict, tuple]]:
    """(case key, config, world, batch names)."""
    f = ld.fields
    one = {"num_processes": 1, "gradient_accumulation_steps": 1}
    specs: list[tuple[str, dict, dict, tuple]] = []
    default_cfg = {}
    if ld.fields.get("gradient_accumulation_steps", 1) != 1:
        default_cfg = {"gradient_accumulation_steps": 1}
    specs.append(("default", default_cfg, one, ("builtin", "random0")))
    if default_cfg:
        ga = ld.fields["gradient_accumulation_steps"]
        specs.append((f"gradient_accumulation_steps={ga}(GRPOConfig default)", {},
                      {"num_processes": 1, "gradient_accumulation_steps": ga}, ("builtin",)))

    def has(*keys: str) -> bool:
        return all(k in f for k in keys)

    label = ld.rel.label
    if label in ERA:
        if has("num_iterations", "epsilon"):
            specs.append(("num_iterations=2,epsilon=0.1", {"num_iterations": 2, "epsilon": 0.1}, one,
                          ("builtin", "random0")))
        specs.append(("gradient_accumulation_steps=2", {"gradient_accumulation_steps": 2},
                      {"num_processes": 1, "gradient_accumulation_steps": 2}, ("builtin", "random0")))
        beta = 0.04 if f.get("beta") != 0.04 else 0.1
        specs.append((f"beta={beta}", {"beta": beta}, one, ("builtin", "random0")))
        if has("loss_type"):
            specs.append(("loss_type=grpo,num_iterations=2", {"loss_type": "grpo", "num_iterations": 2}, one,
                          ("builtin", "random0")))
        if has("importance_sampling_level"):
            specs.append(("importance_sampling_level=sequence,num_iterations=2",
                          {"importance_sampling_level": "sequence", "num_iterations": 2}, one, ("random0",)))
        if has("top_entropy_quantile"):
            specs.append(("top_entropy_quantile=0.5,num_iterations=2",
                          {"top_entropy_quantile": 0.5, "num_iterations": 2}, one, ("random0",)))
        if has("use_vllm", "vllm_importance_sampling_correction"):
            specs.append(("use_vllm=true", {"use_vllm": True}, one, ("random0",)))
            if has("vllm_importance_sampling_cap"):
                specs.append(("use_vllm=true,vllm_importance_sampling_cap=1.05",
                              {"use_vllm": True, "vllm_importance_sampling_cap": 1.05}, one, ("random0",)))
        if has("vllm_importance_sampling_mode", "vllm_importance_sampling_cap"):
            specs.append(("use_vllm=true,vllm_importance_sampling_mode=token_truncate,cap=1.05",
                          {"use_vllm": True, "vllm_importance_sampling_mode": "token_truncate",
                           "vllm_importance_sampling_cap": 1.05}, one, ("random0",)))
        if has("steps_per_generation"):
            specs.append(("steps_per_generation=2", {"steps_per_generation": 2}, one, ("builtin", "random0")))
    if label not in FULL:
        return specs

    ni2 = {"num_iterations": 2}
    with_empty = STD + ("random_empty",)
    default_lt = f["loss_type"]
    for lt in ld.loss_types:
        extra = {"importance_sampling_level": "sequence"} if lt == "luspo" else {}
        batches = with_empty if lt in ("grpo", "sapo", "luspo") else STD
        if lt != default_lt:
            specs.append((f"loss_type={lt}", {"loss_type": lt, **extra}, one, batches))
        specs.append((f"loss_type={lt},num_iterations=2", {"loss_type": lt, **extra, **ni2}, one, batches))
    specs += [
        ("epsilon=0.1", {"epsilon": 0.1}, one, STD),  # on-policy: inert
        ("epsilon=0.1,num_iterations=2", {"epsilon": 0.1, **ni2}, one, STD),
        ("epsilon_high=0.28,num_iterations=2", {"epsilon_high": 0.28, **ni2}, one, STD),
        ("delta=1.5,num_iterations=2", {"delta": 1.5, **ni2}, one, STD),
        ("loss_type=cispo,epsilon_high=1.2,num_iterations=2", {"loss_type": "cispo", "epsilon_high": 1.2, **ni2},
         one, STD),
        ("beta=0.04", {"beta": 0.04}, one, STD),
        ("beta=0.04,num_iterations=2", {"beta": 0.04, **ni2}, one, STD),
        ("beta=0.04,use_bias_correction_kl=true,num_iterations=2",
         {"beta": 0.04, "use_bias_correction_kl": True, **ni2}, one, STD),
        ("importance_sampling_level=sequence,num_iterations=2", {"importance_sampling_level": "sequence", **ni2},
         one, with_empty),
        ("loss_type=grpo,importance_sampling_level=sequence,num_iterations=2",
         {"loss_type": "grpo", "importance_sampling_level": "sequence", **ni2}, one, with_empty),
        ("gradient_accumulation_steps=2", {"gradient_accumulation_steps": 2},
         {"num_processes": 1, "gradient_accumulation_steps": 2}, STD),
        ("gradient_accumulation_steps=2,loss_type=grpo", {"gradient_accumulation_steps": 2, "loss_type": "grpo"},
         {"num_processes": 1, "gradient_accumulation_steps": 2}, STD),
        ("gradient_accumulation_steps=2,num_iterations=2", {"gradient_accumulation_steps": 2, **ni2},
         {"num_processes": 1, "gradient_accumulation_steps": 2}, STD),
        ("steps_per_generation=2", {"steps_per_generation": 2}, one, STD),
        ("steps_per_generation=2,loss_type=bnpo", {"steps_per_generation": 2, "loss_type": "bnpo"}, one, STD),
        ("loss_type=dr_grpo,max_completion_length=16", {"loss_type": "dr_grpo", "max_completion_length": 16},
         one, STD),
        ("loss_type=sapo,sapo_temperature_pos=2.0,sapo_temperature_neg=3.0,num_iterations=2",
         {"loss_type": "sapo", "sapo_temperature_pos": 2.0, "sapo_temperature_neg": 3.0, **ni2}, one, STD),
        ("loss_type=vespo,vespo_*,num_iterations=2",
         {"loss_type": "vespo", "vespo_k_pos": 1.5, "vespo_lambda_pos": 2.5, "vespo_k_neg": 2.5,
          "vespo_lambda_neg": 1.5, **ni2}, one, STD),
        ("top_entropy_quantile=0.5,num_iterations=2", {"top_entropy_quantile": 0.5, **ni2}, one, RND),
        ("top_entropy_quantile=0.5,loss_type=grpo", {"top_entropy_quantile": 0.5, "loss_type": "grpo"}, one, RND),
        ("entropy_coef=0.01", {"entropy_coef": 0.01}, one, RND),
        ("entropy_coef=0.01,loss_type=grpo", {"entropy_coef": 0.01, "loss_type": "grpo"}, one, RND),
        ("entropy_coef=0.01,use_adaptive_entropy=true", {"entropy_coef": 0.01, "use_adaptive_entropy": True},
         one, RND),
        (f"off_policy_mask_threshold={OPM_THRESHOLD},num_iterations=2",
         {"off_policy_mask_threshold": OPM_THRESHOLD, **ni2}, one, RND),
        ("use_vllm=true", {"use_vllm": True}, one, RND),
        ("use_vllm=true,vllm_importance_sampling_correction=false",
         {"use_vllm": True, "vllm_importance_sampling_correction": False}, one, RND),
        (f"use_vllm=true,vllm_importance_sampling_correction=false,off_policy_mask_threshold={OPM_THRESHOLD}",
         {"use_vllm": True, "vllm_importance_sampling_correction": False,
          "off_policy_mask_threshold": OPM_THRESHOLD}, one, RND),
    ]
    for mode in ld.is_modes:
        specs.append((f"use_vllm=true,vllm_importance_sampling_mode={mode}",
                      {"use_vllm": True, "vllm_importance_sampling_mode": mode}, one, RND))
        specs.append((f"use_vllm=true,vllm_importance_sampling_mode={mode},clip_min=0.95,clip_max=1.05",
                      {"use_vllm": True, "vllm_importance_sampling_mode": mode,
                       "vllm_importance_sampling_clip_min": 0.95, "vllm_importance_sampling_clip_max": 1.05},
                      one, RND))
    specs += [
        ("use_vllm=true,vllm_importance_sampling_cap=1.05", {"use_vllm": True, "vllm_importance_sampling_cap": 1.05},
         one, RND),
        ("use_vllm=true,loss_type=vespo,vllm_importance_sampling_mode=token_truncate",
         {"use_vllm": True, "loss_type": "vespo", "vllm_importance_sampling_mode": "token_truncate"}, one, RND),
        ("use_vllm=true,loss_type=vespo", {"use_vllm": True, "loss_type": "vespo"}, one, RND),
        ("use_vllm=true,clip_min=1.05,clip_max=0.95",
         {"use_vllm": True, "vllm_importance_sampling_clip_min": 1.05, "vllm_importance_sampling_clip_max": 0.95},
         one, RND),
        ("mask_truncated_completions=true", {"mask_truncated_completions": True}, one, ("builtin",)),
        ("num_processes=2", {}, {"num_processes": 2, "gradient_accumulation_steps": 1}, STD),
        ("num_processes=2,loss_type=bnpo", {"loss_type": "bnpo"}, {"num_processes": 2,
                                                                  "gradient_accumulation_steps": 1}, STD),
        ("num_processes=2,gradient_accumulation_steps=2", {"gradient_accumulation_steps": 2},
         {"num_processes": 2, "gradient_accumulation_steps": 2}, STD),
        ("combined", {
            "loss_type": "dapo", "num_iterations": 2, "epsilon": 0.2, "epsilon_high": 0.28, "delta": 3.0,
            "beta": 0.04, "use_bias_correction_kl": True, "importance_sampling_level": "token",
            "gradient_accumulation_steps": 2, "steps_per_generation": 2, "max_completion_length": 16,
            "top_entropy_quantile": 0.8, "entropy_coef": 0.01, "use_adaptive_entropy": False,
            "off_policy_mask_threshold": OPM_THRESHOLD, "use_vllm": True, "vllm_importance_sampling_correction": True,
            "vllm_importance_sampling_mode": "token_truncate", "vllm_importance_sampling_clip_min": 0.95,
            "vllm_importance_sampling_clip_max": 2.0, "sapo_temperature_pos": 2.0, "sapo_temperature_neg": 3.0,
            "vespo_k_pos": 1.5, "vespo_lambda_pos": 2.5, "vespo_k_neg": 2.5, "vespo_lambda_neg": 1.5,
            "mask_truncated_completions": False,
        }, {"num_processes": 1, "gradient_accumulation_steps": 2}, RND),
    ]
    out = []
    for key, cfg, world, batches in specs:
        if all(k in f or k in ("gradient_accumulation_steps",) for k in cfg):
            out.append((key, cfg, world, batches))
    return out

# --------------------------------------------------------------------------------------
# Rules prose (per release)
# --------------------------------------------------------------------------------------


def rules_text(ld: Loaded) -> str:
    parts = []
    if ld.entry == "v014":
        parts.append(
            "compute_loss generates, scores and computes the loss in one call, so only its loss statements are "
            "run (see picked): per_token_kl = exp(ref - lp) - (ref - lp) - 1; per_token_loss = exp(lp - "
            "lp.detach()) * A - beta * kl (negated); loss = mean over rows of row sum / row length (no clamp: an "
            "empty row gives NaN). ref_per_token_logps is always computed (beta is applied unconditionally); "
            "old log-probs do not exist (ratio exp(lp - lp.detach()) = 1 with the policy gradient).")
    else:
        parts.append("compute_loss(model, inputs) is executed as upstream wrote it"
                     + (" and dispatches to _compute_loss (liger kernel off)" if "_compute_loss" in
                        ld.trainer_cls.__dict__ else "") + ".")
    if ld.old_cond is None:
        parts.append("Old log-probs: never computed at this release (no old_per_token_logps in the batch"
                     + ("" if ld.entry == "v014" else "; the ratio is exp(lp - lp.detach())") + ").")
    else:
        ge, test = ld.old_cond
        parts.append(f"Old log-probs: computed in the generation step iff `{ast.unparse(test)}` (line {test.lineno}"
                     + (f", with `generate_every = {ast.unparse(ge.value)}` line {ge.lineno}" if ge else "")
                     + "), evaluated on the stand-in self; when not computed the batch holds "
                     + ("old_per_token_logps = None" if "old_per_token_logps" in ld.out_literal
                        else "no old_per_token_logps key")
                     + " and _compute_loss substitutes per_token_logps.detach().")
    if ld.entry != "v014" and "ref_per_token_logps" not in ld.out_literal | ld.out_conditional:
        parts.append("ref_per_token_logps: not in the batch; _compute_loss computes them itself when beta != 0.0 "
                     "with self.ref_model under torch.no_grad (the stand-in reference forward returns "
                     "ref_logprobs rows; ref_logprobs_computed is null in the cases).")
    else:
        parts.append("ref_per_token_logps: " + ("computed only when beta != 0.0." if ld.ref_gated
                                                 else "always computed."))
    if ld.trainer_divides:
        parts.append("Gradient accumulation: GRPOTrainer passes compute_loss_func to Trainer.__init__ (a non-None "
                     "placeholder), so transformers' Trainer.training_step does not divide (its condition is "
                     "`(not self.model_accepts_loss_kwargs or num_items_in_batch is None) and "
                     "self.compute_loss_func is None`); TRL divides itself inside _compute_loss (by "
                     "current_gradient_accumulation_steps, or via num_items_in_batch for dapo/cispo/vespo), in "
                     "the executed code. The recorder adds nothing.")
    else:
        parts.append("Gradient accumulation: GRPOTrainer sets model_accepts_loss_kwargs = False and passes no "
                     "compute_loss_func, and does not override training_step, so transformers' "
                     "Trainer.training_step divides the compute_loss value by gradient_accumulation_steps before "
                     "backward (transformers >= 4.46: `if (not self.model_accepts_loss_kwargs or "
                     "num_items_in_batch is None) and self.compute_loss_func is None: loss = loss / "
                     "gradient_accumulation_steps`; older versions scaled in accelerator.backward). The recorder "
                     "applies that division (outside upstream code) to every micro-batch loss.")
    if ld.split_arg is not None:
        parts.append(f"Micro-batches: the generation batch is cut by upstream split_tensor_dict into "
                     f"`{ast.unparse(ld.split_arg)}` contiguous chunks (rows presented pre-shuffled).")
    else:
        parts.append("Micro-batches: every micro-step generates its own batch (no buffering split), so one "
                     "recorded batch is one micro-batch.")
    if ld.is_node is not None:
        parts.append(f"vLLM importance sampling: the release's block (lines {lines(ld.is_node)}) runs with "
                     "old_per_token_logps = old_logprobs and sampling_per_token_logps = rollout_logprobs; its "
                     f"{ld.is_var} becomes inputs['importance_sampling_ratio'].")
    if "num_items_in_batch" in (ld.out_literal | ld.out_conditional):
        parts.append("num_items_in_batch = num_processes * the generation batch's completion-mask token count "
                     "(every process alike), an int64 0-dim tensor, identical in every micro-batch.")
    parts.append(f"completion_mask dtype: {str(ld.mask_dtype).replace('torch.', '')}.")
    return " ".join(parts)


SKIPPED = (
    "mask_truncated_completions changes completion_mask inside _generate_and_score_completions (rows without "
    "EOS are zeroed); the recorder's batches already carry their final mask, so the key is inert in "
    "_compute_loss and recorded only to show that (the case is identical to default). shuffle_sequence_dict "
    "row shuffling is not modelled (rows are given in the split order). Liger kernel / use_liger_loss paths, "
    "tool masks, multimodal keys, MoE aux loss and evaluation mode are not recorded. The vLLM sampling "
    "log-probs of the random batches are rollout_logprobs; the builtin batch has none, so vLLM, entropy and "
    "off-policy cases use random batches only. The entropy bonus / adaptive entropy are recorded for one "
    "optimizer window from the initial controller state (_last_world_entropy = inf). num_iterations = 2 "
    "records one pass. Per-key cases are recorded only at v1.9.0 and f2cd5771; era cases at "
    + ", ".join(ERA) + "; every other release has only the default cases."
)

# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


def to_json_floats(values: Any) -> Any:
    if isinstance(values, list):
        return [to_json_floats(v) for v in values]
    if isinstance(values, float) and not math.isfinite(values):
        raise SystemExit("non-finite output")
    return values


def main() -> None:
    global torch
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trl-git", default=os.environ.get("TRL_GIT"),
                        help="git directory (bare) of huggingface/trl (default: $TRL_GIT)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output JSON file")
    parser.add_argument("--only", default=None, help="comma-separated release labels (debugging; not for the fixture)")
    args = parser.parse_args()
    if not args.trl_git:
        parser.error("--trl-git (or $TRL_GIT) is required")
    git_dir = Path(args.trl_git).resolve()
    if (git_dir / ".git").is_dir():
        git_dir = git_dir / ".git"
    import torch as _torch  # noqa: PLC0415
    torch = _torch
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    command = shlex.join([sys.executable, TOOL_PATH, *sys.argv[1:]])
    if "--trl-git" not in sys.argv[1:]:
        command = f"TRL_GIT={shlex.quote(args.trl_git)} {command}"

    facts = check_against_facts(read_facts())
    raw_batches = draw_batches()
    only = set(args.only.split(",")) if args.only else None

    releases_prov: dict[str, Any] = {}
    cases: list[dict] = []
    raised: list[str] = []
    nonfinite: list[str] = []
    out = Path(args.out)
    for rel in RELEASES:
        if only is not None and rel.label not in only:
            continue
        sources = _verl.read_release(git_dir, rel)
        ld = load_release(rel, sources, facts[rel.label])
        for key, config, world, batch_names in case_specs(ld):
            if config.get("gradient_accumulation_steps", world["gradient_accumulation_steps"]) != \
                    world["gradient_accumulation_steps"]:
                raise SystemExit(f"{key}: config and world disagree on gradient_accumulation_steps")
            for bname in batch_names:
                name = f"{rel.label}/{key}/{bname}"
                raw = raw_batches[bname]
                needs_ent = any(k in config for k in ("top_entropy_quantile", "entropy_coef"))
                if (needs_ent or config.get("use_vllm")) and bname == "builtin":
                    raise SystemExit(f"{name}: needs entropies / rollout logprobs")
                case: dict[str, Any] = {"name": name, "release": rel.label, "config": config, "world": world,
                                        "batch": _verl.batch_json(raw)}
                try:
                    result = run_case(ld, config, world, raw)
                except UpstreamRaised as exc:
                    case["upstream_raises"] = str(exc)
                    case["num_items_in_batch"] = None
                    cases.append(case)
                    raised.append(name)
                    continue
                grad = result["grad"]
                finite = bool(torch.isfinite(grad).all()) and math.isfinite(result["loss"]) and all(
                    math.isfinite(m["loss"]) for m in result["micro"])
                if not finite:
                    case["upstream_nonfinite"] = (
                        "upstream's loss or gradient is not finite for this batch (loss "
                        f"{result['loss']!r}); no numbers recorded")
                    case["num_items_in_batch"] = result["num_items_in_batch"]
                    cases.append(case)
                    nonfinite.append(name)
                    continue
                if grad[~raw["mask"]].abs().sum().item() != 0.0:
                    raise SystemExit(f"{name}: gradient at padding")
                case.update({
                    "num_items_in_batch": result["num_items_in_batch"],
                    "loss": to_json_floats(result["loss"]),
                    "grad_logprobs": to_json_floats(grad.tolist()),
                    "micro_batches": [{"rows": m["rows"], "loss": to_json_floats(m["loss"])} for m in result["micro"]],
                    "old_logprobs_computed": result["old_computed"],
                    "ref_logprobs_computed": result["ref_computed"],
                })
                cases.append(case)
        releases_prov[rel.label] = {
            "tag": rel.tag, "commit": rel.commit, "files": dict(sorted(rel.files.items())),
            "picked": ld.picked, "rules": rules_text(ld), "derived_attributes": dict(sorted(ld.derived.items())),
            "loss_types": ld.loss_types, "vllm_importance_sampling_modes": ld.is_modes,
            "mask_dtype": str(ld.mask_dtype).replace("torch.", ""),
            "divides_by_gradient_accumulation": "trl (in _compute_loss)" if ld.trainer_divides else
            "transformers Trainer.training_step (applied by the recorder)",
        }

    builtin_sha = hashlib.sha256(BUILTIN_BATCH_FILE.read_bytes()).hexdigest()
    payload = {
        "provenance": {
            "tool": TOOL_PATH, "command": command, "repo": "huggingface/trl",
            "python": platform.python_version(), "torch": torch.__version__, "dtype": "float64",
            "releases": releases_prov, "stubs": STUBS, "batch_rule": BATCH_RULE, "skipped": SKIPPED,
            "builtin_batch": {"path": "test/fixtures/polgrad/which_example.json", "key": "batch",
                              "sha256": builtin_sha},
            "facts": {"path": "src/conformance/releases/data/trl.json",
                      "sha256": hashlib.sha256(FACTS_FILE.read_bytes()).hexdigest()},
            "random_batch_seeds": {k: v["seed"] for k, v in sorted(raw_batches.items()) if "seed" in v},
            "upstream_raises": raised, "upstream_nonfinite": nonfinite,
        },
        "cases": cases,
    }
    text = json.dumps(payload, indent=1, sort_keys=True, allow_nan=False, ensure_ascii=False) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    counts: dict[str, int] = {}
    for case in cases:
        counts[case["release"]] = counts.get(case["release"], 0) + 1
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(cases)} cases)")
    for label, n in counts.items():
        print(f"  {label}: {n}")
    for name in raised:
        print(f"raises: {name}")
    for name in nonfinite:
        print(f"non-finite: {name}")


if __name__ == "__main__":
    main()
