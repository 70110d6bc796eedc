"""Generators: deterministic for a seed, and each combinator's shape."""
from __future__ import annotations

import itertools

from ground import generator as gen
from ground.generator import NS, Context, Pending
from ground.op import NEMESIS
from harness.plan import HEAL_ALL, prepare
from harness.schedules.one_at_a_time import FaultSchedule
from harness.scenario import parse_scenario


def counter_source(rng):
    n = itertools.count()
    return gen.Source(lambda r: {"f": r.choice(["send", "poll"]), "value": next(n) * 1000 + r.randrange(1000)}, rng)


def drain(g, *, threads=(0, 1, 2), step_ns=1_000_000, until_ns=10 * NS, busy=0):
    """Ask `g` round-robin from `threads` on a fake clock; (time, thread, op) for every op."""
    out, now = [], 0
    for thread in itertools.cycle(threads):
        if now > until_ns:
            break
        answer = g.op(Context(now, thread, busy))
        if answer is None:
            break
        if isinstance(answer, dict):
            out.append((now, thread, answer))
        now += step_ns
    return out


def staggered_mix(seed):
    return gen.TimeLimit(2, gen.Stagger(100, gen.Mix([counter_source(gen.derive_rng(seed, "a")),
                                                      counter_source(gen.derive_rng(seed, "b"))],
                                                     gen.derive_rng(seed, "mix"), [3, 1]),
                                        gen.derive_rng(seed, "stagger")))


def test_same_seed_gives_the_same_ops_at_the_same_times():
    assert drain(staggered_mix(42)) == drain(staggered_mix(42))


def test_different_seeds_give_different_ops():
    assert [op for _, _, op in drain(staggered_mix(1))] != [op for _, _, op in drain(staggered_mix(2))]


def test_derived_streams_are_independent_of_each_other():
    a1 = gen.derive_rng(5, "workload/a")
    gen.derive_rng(5, "workload/b").random()  # using one stream does not move another
    assert a1.random() == gen.derive_rng(5, "workload/a").random()


def test_mix_follows_its_weights():
    ops = drain(gen.Limit(4000, gen.Mix([gen.Source(lambda r: {"f": "a"}, gen.derive_rng(0, "x")),
                                         gen.Source(lambda r: {"f": "b"}, gen.derive_rng(0, "y"))],
                                        gen.derive_rng(0, "mix"), [3, 1])), until_ns=10**12)
    share = sum(op["f"] == "a" for _, _, op in ops) / len(ops)
    assert 0.70 < share < 0.80


def test_stagger_keeps_the_target_rate():
    ops = drain(gen.TimeLimit(10, gen.Stagger(50, counter_source(gen.derive_rng(0, "s")), gen.derive_rng(0, "t"))),
                step_ns=100_000)
    assert 400 <= len(ops) <= 600  # 50 ops/s for 10 s


def test_stagger_is_pending_until_the_next_op_is_due():
    g = gen.Stagger(10, counter_source(gen.derive_rng(0, "s")), gen.derive_rng(0, "t"))
    assert isinstance(g.op(Context(0, 0)), dict)
    answer = g.op(Context(0, 1))
    assert isinstance(answer, Pending) and 0 <= answer.until < 2 * NS / 10


def test_limit_stops_after_n_ops():
    assert len(drain(gen.Limit(7, counter_source(gen.derive_rng(0, "s"))))) == 7


def test_time_limit_ends_at_its_deadline():
    ops = drain(gen.TimeLimit(1, counter_source(gen.derive_rng(0, "s"))), step_ns=NS // 10)
    assert [t for t, _, _ in ops] == [i * NS // 10 for i in range(10)]


def test_clients_never_hands_an_op_to_the_nemesis():
    ops = drain(gen.Limit(50, gen.clients(counter_source(gen.derive_rng(0, "s")))), threads=(0, NEMESIS, 1))
    assert ops and all(thread != NEMESIS for _, thread, _ in ops)


def test_fault_schedule_starts_then_stops_a_fault_every_interval():
    g = gen.TimeLimit(10.5, gen.nemesis(FaultSchedule(["kill", "pause"], 2, gen.derive_rng(3, "f"))))
    ops = drain(g, threads=(NEMESIS,), step_ns=NS // 100, until_ns=11 * NS)
    assert [t for t, _, _ in ops] == [2 * NS, 4 * NS, 6 * NS, 8 * NS, 10 * NS]
    assert [op["f"] for _, _, op in ops] == ["start", "stop", "start", "stop", "start"]
    assert ops[0][2]["fault"] == ops[1][2]["fault"] and ops[2][2]["fault"] == ops[3][2]["fault"]


def test_an_in_order_schedule_starts_the_faults_as_listed_then_from_the_first_again():
    g = gen.nemesis(FaultSchedule(["migrate", "kill", "pause"], 1, gen.derive_rng(3, "f"), in_order=True))
    ops = drain(g, threads=(NEMESIS,), step_ns=NS // 10, until_ns=int(8.5 * NS))
    starts = [op["fault"] for _, _, op in ops if op["f"] == "start"]
    assert starts == ["migrate", "kill", "pause", "migrate"]


def test_phases_wait_for_ops_in_flight_before_the_next_phase():
    g = gen.Phases(("one", gen.once({"f": "a"})), ("two", gen.once({"f": "b"})))
    assert g.op(Context(0, 0))["f"] == "a"
    assert isinstance(g.op(Context(1, 1, busy=1)), Pending)  # "a" still in flight
    assert g.name == "one"
    assert g.op(Context(2, 1, busy=0))["f"] == "b"
    assert g.name == "two"


def test_sleep_holds_everyone_for_its_duration():
    g = gen.Sleep(1.5)
    assert g.op(Context(NS, 0)) == Pending(NS + 3 * NS // 2)
    assert g.op(Context(3 * NS, 0)) is None


NOOP = {"workloads": [{"name": "noop"}], "nemesis": {"faults": ["noop"], "interval": 1}, "duration": 3,
        "recovery_wait": 1, "final_read_time_limit": 5, "rate": 20, "seed": 11}


def run_plan_generator(seed):
    """The whole run's generator on a fake clock, every op completing at once."""
    g = prepare(parse_scenario(dict(NOOP, seed=seed), "t"), "t").generator()
    ops = drain(g, threads=(0, 1, NEMESIS), step_ns=10_000_000, until_ns=100 * NS)
    return g, ops


def test_a_run_is_main_then_heal_then_recovery_then_final_reads():
    _, ops = run_plan_generator(11)
    heal = next(i for i, (_, _, op) in enumerate(ops) if op["f"] == HEAL_ALL)
    before, after = ops[:heal], ops[heal + 1:]
    assert {op["f"] for _, _, op in before} >= {"send", "start", "stop"}
    assert after and all(op["f"] == "final-read" for _, _, op in after)
    assert after[0][0] - ops[heal][0] >= 1 * NS  # recovery wait
    assert max(t for t, _, op in before if op["f"] == "send") < 3 * NS


def test_a_runs_ops_are_the_same_for_the_same_seed():
    assert run_plan_generator(5)[1] == run_plan_generator(5)[1]


def test_fault_ops_carry_a_seed_drawn_from_the_runs_seed():
    def seeds(seed):
        g = FaultSchedule(["kill", "pause"], 1, gen.derive_rng(seed, "faults"))
        return [op["seed"] for _, _, op in drain(g, threads=(NEMESIS,), step_ns=NS // 10, until_ns=6 * NS)]

    assert seeds(4) == seeds(4) and seeds(4) != seeds(5) and len(set(seeds(4))) == len(seeds(4))
