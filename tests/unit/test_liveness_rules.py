"""The pure rules of slice E: when an executor is stalled and how that is told, how error
reports are throttled, and how a failure's root cause becomes one line."""

import pytest

from squall.worker.error_reports import ErrorReports
from squall.worker.error_throttle import ThrottleState, Verdict, admit, overdue, with_note
from squall.worker.root_cause import (
    MAX_CAUSE_CHARS,
    MAX_CHAIN,
    KnownCause,
    _java_chain,
    cause_in_trace,
    deepest,
    jvm_exit_cause,
    one_line,
    root_cause,
)
from squall.worker.stall import Frame, Progress, stall_message, stalled_for, stuck_at

# --- stall ---


@pytest.mark.parametrize(
    ("progress", "now", "stalled"),
    [
        (Progress(last=0.0, busy=True, waiting=1), 5.1, 5.1),  # inside a call too long
        (Progress(last=0.0, busy=False, waiting=3), 5.1, 5.1),  # input waits, nothing moves
        (Progress(last=0.0, busy=False, waiting=1), 5.1, 5.1),
        (Progress(last=0.0, busy=True, waiting=0), 5.1, 5.1),  # in next_tuple too long
        (Progress(last=0.0, busy=True, waiting=9), 5.0, None),  # exactly the timeout: not yet
        (Progress(last=0.0, busy=False, waiting=0), 500.0, None),  # idle: never stalled
        (Progress(last=10.0, busy=True, waiting=2), 12.0, None),  # recent progress
    ],
)
def test_stalled_only_beyond_the_timeout_with_input_waiting(progress, now, stalled):
    assert stalled_for(progress, now, timeout=5.0) == stalled


def test_stuck_at_names_the_users_frame_under_a_library_wait():
    frames = [
        Frame("/lib/threading.py", 1000, "_bootstrap"),
        Frame("/app/bolts.py", 12, "process"),
        Frame("/lib/threading.py", 629, "wait"),
    ]
    where = stuck_at(frames, lambda f: f.startswith("/lib/"))
    assert where == "/app/bolts.py:12 in process (waiting in /lib/threading.py:629 in wait)"


def test_stuck_at_user_code_is_that_frame_alone():
    frames = [Frame("/lib/threading.py", 1, "run"), Frame("/app/bolts.py", 7, "process")]
    assert stuck_at(frames, lambda f: f.startswith("/lib/")) == "/app/bolts.py:7 in process"
    assert stuck_at([], lambda f: True) == "unknown"
    only_lib = [Frame("/lib/a.py", 3, "f")]
    assert stuck_at(only_lib, lambda f: True) == "/lib/a.py:3 in f"


def test_stall_message_says_who_how_long_how_much_and_where():
    text = stall_message("bolt", "count", 4, 6.4, 37, "/app/b.py:3 in process")
    assert text == (
        "bolt count task 4 made no progress for 6 s with 37 tuples waiting; "
        "stuck at /app/b.py:3 in process"
    )
    assert "\n" not in text


# --- throttle ---


def run_throttle(times, limit=5, interval=10.0):
    state, verdicts = ThrottleState(), []
    for t in times:
        state, verdict = admit(state, t, limit, interval)
        verdicts.append(verdict)
    return state, verdicts


def test_at_most_limit_reports_per_interval_and_the_rest_counted():
    times = [i * 0.02 for i in range(50)]  # 50 errors a second for a second
    state, verdicts = run_throttle(times)
    assert [v.report for v in verdicts] == [True] * 5 + [False] * 45
    assert state.suppressed == 45 and state.suppressed_since == pytest.approx(0.1)


def test_the_next_report_carries_the_count_and_resets_it():
    state, _ = run_throttle([i * 0.02 for i in range(50)])
    state, verdict = admit(state, 10.1, 5, 10.0)
    assert verdict == Verdict(True, " (and 45 more errors in the last 10 s)")
    assert state.suppressed == 0 and state.reported == 1
    state, verdict = admit(state, 10.2, 5, 10.0)
    assert verdict == Verdict(True, "")


def test_a_new_interval_allows_limit_more():
    times = [0, 1, 2, 3, 4, 5, 6, 10, 11, 12, 13, 14, 15]
    _, verdicts = run_throttle(times)
    assert [v.report for v in verdicts] == [True] * 5 + [False] * 2 + [True] * 5 + [False]


def test_an_urgent_report_always_goes_through():
    state, _ = run_throttle([0.0] * 5)
    state, verdict = admit(state, 0.5, 5, 10.0, urgent=True)
    assert verdict.report and verdict.note == ""
    state, verdict = admit(state, 0.6, 5, 10.0)
    assert not verdict.report


def test_a_burst_that_stopped_gets_its_count_reported_after_the_interval():
    state, _ = run_throttle([i * 0.02 for i in range(50)])
    assert overdue(state, 9.0, 10.0) == (state, "")  # the interval is not over yet
    state, text = overdue(state, 10.1, 10.0)
    assert text == (
        "45 more errors in the last 10 s were not reported (topology.max.error.report.per.interval)"
    )
    assert state.suppressed == 0 and state.reported == 1
    assert overdue(state, 30.0, 10.0)[1] == ""  # nothing held back: nothing to say
    assert overdue(ThrottleState(), 30.0, 10.0) == (ThrottleState(), "")


def test_a_held_back_count_is_due_exactly_one_interval_after_its_window_began():
    state, _ = run_throttle([100.0, 100.1, 100.2, 100.3, 100.4, 100.5, 101.0])
    assert overdue(state, 109.9, 10.0)[1] == ""
    later, text = overdue(state, 110.0, 10.0)
    assert text.startswith("2 more errors in the last 10 s") and later.window_start == 110.0


def test_a_stopped_burst_is_reported_by_its_last_error_not_only_a_count():
    """The topology's last error names the exception: a bolt raising on every tuple showed
    only "45 more errors ... were not reported" as its last error."""
    state = ThrottleState()
    for i in range(8):
        state, _ = admit(state, i * 0.1, 5, 10.0, text=f"ValueError: bad row {i}\n  File x")
    assert state.last_suppressed == "ValueError: bad row 7"
    state, text = overdue(state, 10.0, 10.0)
    assert text == (
        "ValueError: bad row 7 (3 more errors in the last 10 s were not reported "
        "(topology.max.error.report.per.interval); this is the last)"
    )
    assert state.last_suppressed == ""


def test_with_note_goes_on_the_first_line():
    assert (
        with_note("ValueError: x\n  File a", " (and 3 more)")
        == "ValueError: x (and 3 more)\n  File a"
    )
    assert with_note("one", "") == "one"


# --- root cause ---

JAVA_TRACE = """An error occurred while calling o42.collect.
: org.apache.spark.SparkException: Job aborted due to stage failure: boom
\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2856)
\tat scala.collection.immutable.List.foreach(List.scala:333)
Caused by: java.io.IOException: wrapper
\tat org.apache.hadoop.fs.FileSystem.get(FileSystem.java:1)
\t... 12 more
Caused by: java.net.UnknownHostException: spark-master.invalid: Name or service not known
\tat java.base/java.net.Inet6AddressImpl.lookupAllHostAddr(Native Method)
"""


def test_cause_in_trace_is_the_last_caused_by_without_stack_lines():
    cause = cause_in_trace(JAVA_TRACE)
    assert cause == "java.net.UnknownHostException: spark-master.invalid: Name or service not known"


def test_cause_in_trace_without_caused_by_is_the_exception_line():
    text = "An error occurred while calling None.x.\n: org.apache.spark.SparkException: bad\n"
    text += "\tat a.b(C)"
    assert cause_in_trace(text) == "org.apache.spark.SparkException: bad"


def test_one_line_drops_stack_lines_and_caps():
    assert one_line("a: b\n\tat x.y(Z)\n  more text\n") == "a: b more text"
    long = one_line("E: " + "x" * 2000)
    assert len(long) == 500 and long.endswith("...")


class FakeThrowable:
    """A stand-in for a py4j JavaObject: toString() and getCause() only."""

    def __init__(self, text, cause=None):
        self.text, self.cause = text, cause

    def toString(self):  # noqa: N802 - Java's name
        return self.text

    def getCause(self):  # noqa: N802 - Java's name
        return self.cause


class FakePy4JError(Exception):
    def __init__(self, throwable):
        super().__init__("An error occurred while calling x")
        self.java_exception = throwable


def test_root_cause_walks_the_java_cause_chain_to_the_deepest():
    chain = FakeThrowable(
        "org.apache.spark.SparkException: outer",
        FakeThrowable("java.lang.IllegalArgumentException: bad master\n\tat x.y(Z)"),
    )
    assert root_cause(FakePy4JError(chain)) == "java.lang.IllegalArgumentException: bad master"
    assert deepest(["a: 1", "b: 2"]) == "b: 2" and deepest([]) == ""


def test_deepest_keeps_the_first_line_or_the_python_exception_of_a_udf():
    plan = "org.apache.spark.sql.AnalysisException: [UNRESOLVED_COLUMN] `nope`; line 1\n'Project"
    assert deepest(["x.Y: outer", plan]) == (
        "org.apache.spark.sql.AnalysisException: [UNRESOLVED_COLUMN] `nope`; line 1"
    )
    udf = (
        "org.apache.spark.api.python.PythonException: [PYTHON_EXCEPTION] An exception was "
        "thrown from the Python worker:\nTraceback (most recent call last):\n"
        '  File "/app/bolt.py", line 11, in <lambda>\n    1 // 0\n    ~~^^~~\n'
        "ZeroDivisionError: integer division or modulo by zero\nSQLSTATE: 38000"
    )
    assert deepest([udf]) == (
        "org.apache.spark.api.python.PythonException: "
        "ZeroDivisionError: integer division or modulo by zero"
    )


def test_root_cause_of_a_cyclic_chain_ends():
    a = FakeThrowable("a.A: 1")
    a.cause = a
    assert root_cause(FakePy4JError(a)) == "a.A: 1"


def test_root_cause_falls_back_to_the_text_when_the_jvm_is_gone():
    class Gone:
        def toString(self):  # noqa: N802
            raise ConnectionError("py4j: the JVM is gone")

    class Dead(Exception):
        java_exception = Gone()

        def __str__(self):
            return JAVA_TRACE

    assert root_cause(Dead()).startswith("java.net.UnknownHostException:")


def test_root_cause_of_a_python_exception_is_type_and_message():
    assert root_cause(ValueError("no such column 'x'\nsecond line")) == (
        "ValueError: no such column 'x' second line"
    )
    assert root_cause(KeyError()) == "KeyError"


def test_jvm_exit_cause_is_the_main_threads_exception():
    lines = [
        "26/11/23 13:31:55 WARN Utils: Your hostname, vm, resolves to a loopback address",
        'Exception in thread "main" org.apache.spark.SparkException: Master must either be '
        "yarn or start with spark, k8s, or local",
        "\tat org.apache.spark.deploy.SparkSubmit.error(SparkSubmit.scala:1068)",
    ]
    assert jvm_exit_cause(lines) == (
        "org.apache.spark.SparkException: Master must either be yarn or start with spark, "
        "k8s, or local"
    )


def test_jvm_exit_cause_of_a_jvm_that_could_not_be_created_names_the_option():
    lines = [
        "Invalid maximum heap size: -Xmx12q",
        "Error: Could not create the Java Virtual Machine.",
        "Error: A fatal exception has occurred. Program will exit.",
    ]
    assert jvm_exit_cause(lines) == (
        "Invalid maximum heap size: -Xmx12q Error: Could not create the Java Virtual Machine."
    )
    assert jvm_exit_cause(["Error: no JAVA_HOME"]) == "Error: no JAVA_HOME"
    assert jvm_exit_cause(["26/11/23 13:31:55 INFO all is well"]) is None


def test_a_known_cause_is_reported_as_it_is():
    assert root_cause(KnownCause("java.lang.Foo: bar\n\tat x")) == "java.lang.Foo: bar"
    known = KnownCause("Invalid maximum heap size: -Xmx12q")
    assert root_cause(known) == "Invalid maximum heap size: -Xmx12q" == str(known)


def test_one_line_boundaries():
    assert one_line("a\n\n   \n b") == "a b"
    exact = "E: " + "x" * (MAX_CAUSE_CHARS - 3)
    assert one_line(exact) == exact
    assert cause_in_trace("nothing that names a class") == "nothing that names a class"


def test_the_java_chain_is_bounded():
    a = FakeThrowable("a.A: 1")
    a.cause = a
    assert len(_java_chain(a)) == MAX_CHAIN == 32


def test_a_udf_error_with_a_message_of_several_lines_keeps_its_first():
    udf = (
        "org.apache.spark.api.python.PythonException: [PYTHON_EXCEPTION] worker failed:\n"
        'Traceback (most recent call last):\n  File "/app/b.py", line 3, in f\n'
        "ValueError: bad row\nhint: check the input\n"
    )
    assert deepest([udf]) == "org.apache.spark.api.python.PythonException: ValueError: bad row"


def test_a_launcher_error_after_a_log_line_is_not_joined_to_it():
    lines = ["26/11/23 13:31:55 WARN Utils: loopback", "Error: Could not create the JVM."]
    assert jvm_exit_cause(lines) == "Error: Could not create the JVM."
    lines = ["\tat a.b(C)", "Error: Could not create the JVM."]
    assert jvm_exit_cause(lines) == "Error: Could not create the JVM."


def test_root_cause_of_a_captured_pyspark_exception_uses_its_java_origin():
    class Captured(Exception):
        _origin = FakeThrowable("x.Outer: o", FakeThrowable("java.io.IOException: disk full"))

    assert root_cause(Captured("outer text")) == "java.io.IOException: disk full"


def test_root_cause_when_the_jvm_is_gone_and_the_text_has_no_stack():
    class Gone:
        def toString(self):  # noqa: N802
            raise ConnectionError("gone")

    class Dead(Exception):
        java_exception = Gone()

    dead = Dead("An error occurred while calling o1.x.\n: org.apache.spark.SparkException: lost")
    assert root_cause(dead) == "org.apache.spark.SparkException: lost"


def test_root_cause_of_an_exception_whose_text_cannot_be_had():
    class Mute(Exception):
        def __str__(self):
            raise RuntimeError("no text")

    assert root_cause(Mute()) == "Mute"


# --- the worker's error reports (ErrorReports over the throttle, with a fake clock) ---


def test_error_reports_throttle_each_task_on_its_own_and_report_what_was_held_back():
    now = [0.0]
    written = []
    reports = ErrorReports(
        {"topology.max.error.report.per.interval": 2, "topology.error.throttle.interval.secs": 10},
        lambda component, text: written.append((component, text)),
        clock=lambda: now[0],
    )
    for i in range(20):
        now[0] = i * 0.1
        reports.report("raiser", 3, f"ValueError: {i}\n  File x")
        reports.report("other", 4, f"KeyError: {i}")
    assert written == []  # a task's report only queues: the worker's round writes them
    reports.write_pending()
    assert written == [
        ("raiser", "ValueError: 0\n  File x"),
        ("other", "KeyError: 0"),
        ("raiser", "ValueError: 1\n  File x"),
        ("other", "KeyError: 1"),
    ]
    reports.report("raiser", 3, "bolt raiser task 3 made no progress", urgent=True)
    reports.write_pending()
    assert written[-1] == (  # urgent: through the throttle, carrying its count
        "raiser",
        "bolt raiser task 3 made no progress (and 18 more errors in the last 2 s)",
    )
    written.clear()
    now[0] = 5.0
    reports.report_held_back()
    reports.write_pending()
    assert written == []  # the interval is not over: a later error may still carry the count
    now[0] = 12.0
    reports.report("raiser", 3, "ValueError: late\n  File x")
    reports.report_held_back()
    reports.write_pending()
    assert written == [
        ("raiser", "ValueError: late\n  File x"),
        (  # a burst that stopped is reported by its last error, with the count
            "other",
            "KeyError: 19 (18 more errors in the last 12 s were not reported "
            "(topology.max.error.report.per.interval); this is the last)",
        ),
    ]


def test_error_reports_keep_the_newest_while_zookeeper_is_away_long():
    from squall.worker.error_reports import MAX_PENDING

    written = []
    reports = ErrorReports(
        {
            "topology.max.error.report.per.interval": 10**6,
            "topology.error.throttle.interval.secs": 10,
        },
        lambda component, text: written.append(text),
    )
    for i in range(MAX_PENDING + 10):
        reports.report("raiser", 3, f"ValueError: {i}")
    reports.write_pending()
    assert len(written) == MAX_PENDING and written[-1] == f"ValueError: {MAX_PENDING + 9}"
