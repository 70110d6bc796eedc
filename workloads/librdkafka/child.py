"""The librdkafka client of one confluent-kafka release, in a process of its own: the other end
of workloads/librdkafka/process.py. It runs on that release's environment's Python (only that
confluent-kafka installed), so it imports the standard library and confluent_kafka, nothing of
ordeal's.

    python -I child.py FD        FD: this end of a socketpair the parent holds the other end of

Wire: frames of a 4-byte big-endian length and a pickle of a tuple of plain values; no
confluent-kafka object crosses, each side builds its own from the values.
  parent -> child
    ("call", chan, rid, obj, method, args)    run `method` of object `obj` on chan's thread
    ("done", chan, rid, failed)               the parent ran the callback request rid asked for
    ("drop", [obj, ...])                      the parent's proxies of these objects are gone
  child -> parent
    ("ret", chan, rid, value)                 the call's value
    ("err", chan, rid, error)                 the exception it raised
    ("rep", chan, rid, reports)               delivery reports call rid served (a poll's with its
                                              answer, another call's as each comes); the
                                              parent runs them on the calling thread
    ("cb", chan, rid, obj, name, partitions)  a rebalance callback inside call rid: the parent
                                              runs its own, then answers "done"
Each parent thread (chan) has a thread here that runs its calls in order, so that a call runs
where in-process it would: a rebalance callback on the thread that polls, and the calls the
parent's callback makes inside it. Object 0 is this process (hello, producer, consumer).

The process ends when the parent's end of the socket closes (the parent exited or closed it),
whatever its threads are doing; SIGINT is the parent's to handle, not this process's.
"""
from __future__ import annotations

import logging
import os
import pickle
import queue
import signal
import socket
import struct
import sys
import threading

import confluent_kafka
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

HEADER = struct.Struct(">I")
IDLE = 60.0  # seconds a thread with no call waits before it ends (its parent thread may be gone)
CALLBACK_LIMIT = 600.0  # seconds a rebalance callback waits for the parent at most

QUIET = logging.getLogger("ordeal.librdkafka")  # librdkafka's log, dropped as the parent's QUIET drops it
QUIET.addHandler(logging.NullHandler())
QUIET.propagate = False


class CallbackFailed(Exception):
    """The parent's callback raised: this call fails, and the parent raises that exception."""


class Wire:
    def __init__(self, sock: socket.socket):
        self.sock, self.read = sock, sock.makefile("rb")
        self.lock = threading.Lock()

    def send(self, *messages: tuple) -> None:
        frames = [pickle.dumps(m, protocol=pickle.HIGHEST_PROTOCOL) for m in messages]
        data = b"".join(HEADER.pack(len(f)) + f for f in frames)
        with self.lock:
            self.sock.sendall(data)

    def receive(self) -> tuple | None:
        head = self.read.read(HEADER.size)
        if len(head) < HEADER.size:
            return None
        (size,) = HEADER.unpack(head)
        body = self.read.read(size)
        return pickle.loads(body) if len(body) == size else None


def error(err: KafkaError | None) -> tuple | None:
    if err is None:
        return None
    flag = lambda name: bool(getattr(err, name, lambda: False)())  # noqa: E731
    return (err.code(), err.str(), flag("fatal"), flag("retriable"), flag("txn_requires_abort"))


def partitions(tps: list[TopicPartition] | None) -> list[tuple] | None:
    if tps is None:
        return None
    return [(tp.topic, tp.partition, tp.offset, error(tp.error)) for tp in tps]


def topic_partitions(rows: list[tuple]) -> list[TopicPartition]:
    return [TopicPartition(t, p, o) for t, p, o in rows]


def exception(exc: BaseException) -> tuple:
    if isinstance(exc, CallbackFailed):
        return ("callback",)
    if isinstance(exc, KafkaException):
        first = exc.args[0] if exc.args else None
        return ("kafka", error(first)) if isinstance(first, KafkaError) else ("kafka-text", str(first))
    if type(exc).__module__ == "builtins":
        return ("builtin", type(exc).__name__, str(exc))
    return ("other", type(exc).__name__, str(exc))


def timeout(seconds: float | None) -> dict:
    """A timeout as a keyword, or none (each method's own default) when the parent gave none."""
    return {} if seconds is None else {"timeout": seconds}


class Chan:
    """The thread that runs one parent thread's calls, with the call it is in."""

    def __init__(self, server: "Server", chan: int):
        self.server, self.chan = server, chan
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.rid: int | None = None
        self.held: list[tuple] | None = None  # a poll's delivery reports, sent with its answer

    def serve(self) -> None:
        CURRENT.chan = self
        while True:
            try:
                message = self.queue.get(timeout=IDLE)
            except queue.Empty:
                if self.server.retire(self):
                    return
                continue
            self.run(message)

    def run(self, message: tuple) -> None:
        if message[0] != "call":
            return  # a "done" of a callback that gave up waiting
        _, chan, rid, obj, method, args = message
        outer = self.rid, self.held
        # librdkafka's poll returns as soon as it has served what was queued: its reports go
        # with its answer, in one frame. Any other call (a flush, a commit_transaction) may
        # serve reports for a long while: each goes at once.
        self.rid, self.held = rid, [] if method == "poll" else None
        try:
            reply = ("ret", chan, rid, getattr(self.server, "do_" + method)(self.server.objects[obj], *args))
        except BaseException as exc:  # noqa: BLE001 - every exception goes back to the caller
            reply = ("err", chan, rid, exception(exc))
        held = self.held
        self.rid, self.held = outer
        self.server.wire.send(*([("rep", chan, rid, held)] if held else []), reply)

    def report(self, report: tuple) -> None:
        """A delivery report served by the current call, for the parent to run on its thread."""
        if self.held is not None:
            self.held.append(report)
        else:
            self.server.wire.send(("rep", self.chan, self.rid, [report]))

    def callback(self, obj: int, name: str, tps: list[TopicPartition]) -> None:
        """Ask the parent to run its callback `name`, running the calls it makes meanwhile."""
        rid = self.rid
        self.server.wire.send(("cb", self.chan, rid, obj, name, partitions(tps)))
        while True:
            message = self.queue.get(timeout=CALLBACK_LIMIT)
            if message[0] == "done" and message[2] == rid:
                if message[3]:
                    raise CallbackFailed(name)
                return
            self.run(message)


CURRENT = threading.local()  # .chan: the Chan whose thread this is


class Server:
    def __init__(self, wire: Wire):
        self.wire = wire
        self.objects: dict[int, object] = {0: self}
        self.dropped: set[int] = set()
        self.chans: dict[int, Chan] = {}
        self.lock = threading.Lock()

    def dispatch(self, message: tuple) -> None:
        if message[0] == "drop":
            threading.Thread(target=self.drop, args=(message[1],), daemon=True).start()
            return
        with self.lock:
            chan = self.chans.get(message[1])
            if chan is None:
                chan = self.chans[message[1]] = Chan(self, message[1])
                threading.Thread(target=chan.serve, name=f"chan-{message[1]}", daemon=True).start()
            chan.queue.put(message)

    def retire(self, chan: Chan) -> bool:
        """Whether an idle chan's thread may end (nothing came for it meanwhile)."""
        with self.lock:
            if chan.queue.empty():
                del self.chans[chan.chan]
                return True
            return False

    def drop(self, objs: list[int]) -> None:
        """Forget objects whose proxies are gone; a client is destroyed when its last reference
        goes, as in-process (its callbacks, if destroying runs them, no longer reach the parent)."""
        self.dropped.update(objs)
        for obj in objs:
            self.objects.pop(obj, None)

    # -- this process -----------------------------------------------------------------
    def do_hello(self, _self: object) -> dict:
        release = confluent_kafka.version()  # a (string, int) pair in older releases, a string in newer
        return {"version": release[0] if isinstance(release, tuple) else release,
                "libversion": confluent_kafka.libversion()[0], "python": sys.version.split()[0], "pid": os.getpid()}

    def do_producer(self, _self: object, obj: int, config: dict) -> None:
        self.objects[obj] = Producer(config, logger=QUIET)

    def do_consumer(self, _self: object, obj: int, config: dict) -> None:
        self.objects[obj] = Consumer(config, logger=QUIET)

    # -- a producer -------------------------------------------------------------------
    def do_produce(self, producer: Producer, mid: int | None, topic: str, value: object, key: object,
                   partition: int) -> None:
        kwargs: dict = {"value": value, "key": key, "partition": partition}
        if mid is not None:
            def delivered(err: KafkaError | None, msg: object) -> None:
                chan = getattr(CURRENT, "chan", None)
                if chan is not None and chan.rid is not None:  # served by a call (not by destroying the producer)
                    chan.report((mid, error(err), msg.partition(), msg.offset()))

            kwargs["on_delivery"] = delivered
        producer.produce(topic, **kwargs)

    def do_poll(self, client: Producer, seconds: float | None) -> int:
        return client.poll(**timeout(seconds))

    def do_flush(self, producer: Producer, seconds: float | None) -> int:
        return producer.flush(**timeout(seconds))

    def do_init_transactions(self, producer: Producer, seconds: float | None) -> None:
        producer.init_transactions(*([] if seconds is None else [seconds]))

    def do_begin_transaction(self, producer: Producer) -> None:
        producer.begin_transaction()

    def do_send_offsets_to_transaction(self, producer: Producer, offsets: list[tuple], metadata: int,
                                       seconds: float | None) -> None:
        producer.send_offsets_to_transaction(topic_partitions(offsets), self.objects[metadata],
                                             *([] if seconds is None else [seconds]))

    def do_commit_transaction(self, producer: Producer, seconds: float | None) -> None:
        producer.commit_transaction(*([] if seconds is None else [seconds]))

    def do_abort_transaction(self, producer: Producer, seconds: float | None) -> None:
        producer.abort_transaction(*([] if seconds is None else [seconds]))

    # -- a consumer -------------------------------------------------------------------
    def do_subscribe(self, consumer: Consumer, obj: int, topics: list[str], names: list[str]) -> None:
        def relay(name: str):
            def run(_consumer: Consumer, tps: list[TopicPartition]) -> None:
                chan = getattr(CURRENT, "chan", None)
                if obj in self.dropped or chan is None or chan.rid is None:
                    return  # not inside a call of the parent's: confluent-kafka (un)assigns itself
                chan.callback(obj, name, tps)

            return run

        consumer.subscribe(list(topics), **{name: relay(name) for name in names})

    def do_assign(self, consumer: Consumer, tps: list[tuple]) -> None:
        consumer.assign(topic_partitions(tps))

    def do_incremental_assign(self, consumer: Consumer, tps: list[tuple]) -> None:
        consumer.incremental_assign(topic_partitions(tps))

    def do_unassign(self, consumer: Consumer) -> None:
        consumer.unassign()

    def do_incremental_unassign(self, consumer: Consumer, tps: list[tuple]) -> None:
        consumer.incremental_unassign(topic_partitions(tps))

    def do_committed(self, consumer: Consumer, tps: list[tuple], seconds: float | None) -> list[tuple]:
        return partitions(consumer.committed(topic_partitions(tps), **timeout(seconds)))

    def do_consume(self, consumer: Consumer, n: int, seconds: float) -> list[tuple]:
        return [(m.topic(), m.partition(), m.offset(), m.key(), m.value(), error(m.error()))
                for m in consumer.consume(num_messages=n, timeout=seconds)]

    def do_position(self, consumer: Consumer, tps: list[tuple]) -> list[tuple]:
        return partitions(consumer.position(topic_partitions(tps)))

    def do_get_watermark_offsets(self, consumer: Consumer, tp: tuple, seconds: float | None,
                                 cached: bool) -> tuple[int, int]:
        return tuple(consumer.get_watermark_offsets(TopicPartition(*tp), cached=cached, **timeout(seconds)))

    def do_consumer_group_metadata(self, consumer: Consumer, obj: int) -> None:
        self.objects[obj] = consumer.consumer_group_metadata()

    def do_commit(self, consumer: Consumer, tps: list[tuple] | None, asynchronous: bool) -> list[tuple] | None:
        kwargs: dict = {"asynchronous": asynchronous}
        if tps is not None:
            kwargs["offsets"] = topic_partitions(tps)
        return partitions(consumer.commit(**kwargs))

    def do_close(self, consumer: Consumer) -> None:
        consumer.close()


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    wire = Wire(socket.socket(fileno=int(sys.argv[1])))
    server = Server(wire)
    try:
        while (message := wire.receive()) is not None:
            server.dispatch(message)
    finally:
        os._exit(0)  # the parent is gone: so is every client here, whatever its threads do


if __name__ == "__main__":
    main()
