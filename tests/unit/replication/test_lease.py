"""A node's etcd lease (replication/lease.py): until when a refresh lets the node lead, and letting it lapse."""

from __future__ import annotations

import time
from typing import Any, cast

from dynastore.replication.etcd_client import EtcdClient
from dynastore.replication.lease import LEASE_MARGIN, LEASE_TTL, Lease


def lease() -> Lease:
    lapsed: list[str] = []
    return Lease(cast(EtcdClient, cast(Any, None)), lapsed.append)  # refreshes are driven by hand below


def test_a_refresh_lets_the_node_lead_until_the_margin_before_the_lease_could_lapse() -> None:
    held = lease()
    assert held._refreshed(100.0, LEASE_TTL)
    assert held.valid_until == 100.0 + LEASE_TTL - LEASE_MARGIN
    assert held._refreshed(101.0, 1)  # etcd says it lives one more second: no longer than that
    assert held.valid_until == 101.0 + 1 - LEASE_MARGIN


def test_a_lease_etcd_says_is_gone_is_not_refreshed() -> None:
    assert not lease()._refreshed(100.0, 0)


def test_an_unanswered_refresh_keeps_the_lease_only_as_long_as_an_earlier_refresh_could() -> None:
    held = lease()
    held._refreshed(100.0, LEASE_TTL)
    assert held._refreshed(100.0 + LEASE_TTL, None)
    assert not held._refreshed(100.0 + 2 * LEASE_TTL, None)


def test_a_lease_let_lapse_is_not_refreshed_once_and_the_next_one_is() -> None:
    held = lease()
    held.let_lapse()
    assert not held._refreshed(100.0, LEASE_TTL)
    assert held._refreshed(101.0, LEASE_TTL)


def test_a_node_may_campaign_only_with_a_lease_it_holds_now() -> None:
    held = lease()
    assert not held.held()
    held.lease_id, held.valid_until = 7, time.monotonic() + 60
    assert held.held()
    held.valid_until = time.monotonic() - 1
    assert not held.held()
