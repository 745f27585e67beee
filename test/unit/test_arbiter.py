"""Arbiter rules (R-SYS-2): last requester wins, owners are told, release returns resources."""

import threading

import pytest
from sweetie_motion.core.arbiter import Arbiter, UnknownResourceError


class Client:
    """Records what the arbiter tells it."""

    def __init__(self, name, arbiter=None, release_when_empty=False):
        self.name = name
        self.owned = frozenset()
        self.events = []
        self.arbiter = arbiter
        self.release_when_empty = release_when_empty

    def on_resources_changed(self, owned, lost, gained):
        self.owned = owned
        self.events.append((set(lost), set(gained)))
        if self.release_when_empty and not owned and lost:
            self.arbiter.release(self)  # a controller deactivating from its callback


@pytest.fixture
def arbiter():
    return Arbiter(['leg1', 'leg2', 'head', 'eyes'])


def test_request_grants_free_resources_and_tells_the_owner(arbiter):
    a = Client('a')
    assert arbiter.request(a, ['leg1', 'head']) == {'leg1', 'head'}
    assert a.owned == {'leg1', 'head'}
    assert a.events == [(set(), {'leg1', 'head'})]
    assert arbiter.owners() == {'leg1': 'a', 'leg2': '', 'head': 'a', 'eyes': ''}


def test_last_requester_wins_and_the_loser_is_told_synchronously(arbiter):
    a, b = Client('a'), Client('b')
    arbiter.request(a, ['leg1', 'leg2', 'head'])
    arbiter.request(b, ['head'])
    # told before request() returned
    assert a.owned == {'leg1', 'leg2'} and a.events[-1] == ({'head'}, set())
    assert b.owned == {'head'}
    assert arbiter.owned_by(a) == {'leg1', 'leg2'}


def test_released_resources_return_to_the_most_recent_active_requester(arbiter):
    background, first, second = Client('bg'), Client('first'), Client('second')
    arbiter.request(background, ['leg1', 'leg2', 'head'])
    arbiter.request(first, ['head', 'leg1'])
    arbiter.request(second, ['head'])
    arbiter.release(second)
    assert arbiter.owners()['head'] == 'first'  # most recent still-active requester
    arbiter.release(first)
    assert arbiter.owners() == {'leg1': 'bg', 'leg2': 'bg', 'head': 'bg', 'eyes': ''}
    assert background.events[-1] == (set(), {'leg1', 'head'})


def test_a_released_requester_does_not_get_resources_back(arbiter):
    a, b = Client('a'), Client('b')
    arbiter.request(a, ['head'])
    arbiter.request(b, ['head'])
    arbiter.release(a)          # a gives up (it had lost head anyway)
    arbiter.release(b)
    assert arbiter.owners()['head'] == ''
    assert a.owned == frozenset()


def test_partial_release_keeps_the_rest(arbiter):
    a = Client('a')
    arbiter.request(a, ['leg1', 'leg2'])
    assert arbiter.release(a, ['leg2']) == {'leg1'}
    b = Client('b')
    arbiter.request(b, ['leg1'])
    arbiter.release(b)
    assert arbiter.owners()['leg1'] == 'a'
    assert arbiter.owners()['leg2'] == ''


def test_takeover_of_everything_and_release_from_the_callback(arbiter):
    quitter = Client('quitter', arbiter, release_when_empty=True)
    arbiter.request(quitter, ['leg1'])
    taker = Client('taker')
    arbiter.request(taker, ['leg1', 'leg2'])
    assert quitter.owned == frozenset()
    arbiter.release(taker)
    assert arbiter.owners()['leg1'] == ''  # the quitter left: nobody to return to


def test_unknown_resource_is_rejected_and_nothing_changes(arbiter):
    a = Client('a')
    with pytest.raises(UnknownResourceError, match='tail'):
        arbiter.request(a, ['leg1', 'tail'])
    assert arbiter.owners()['leg1'] == '' and a.events == []


def test_listeners_see_every_change_once(arbiter):
    seen = []
    arbiter.add_listener(seen.append)
    a, b = Client('a'), Client('b')
    arbiter.request(a, ['leg1'])
    arbiter.request(a, ['leg1'])      # no change
    arbiter.request(b, ['leg1'])
    arbiter.release(b)
    assert [s['leg1'] for s in seen] == ['a', 'b', 'a']
    version = arbiter.version
    arbiter.request(a, ['leg1'])
    assert arbiter.version == version


def test_concurrent_requests_keep_one_owner_per_resource(arbiter):
    clients = [Client(f'c{i}') for i in range(8)]

    def hammer(client):
        for _ in range(300):
            arbiter.request(client, ['leg1', 'head'])
            arbiter.release(client, ['head'])

    threads = [threading.Thread(target=hammer, args=(c,)) for c in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    owners = arbiter.owners()
    holders = [c for c in clients if 'leg1' in c.owned]
    assert len(holders) == 1 and owners['leg1'] == holders[0].name
    assert sum('head' in c.owned for c in clients) <= 1
