"""tools/execute.py: what it commits does not depend on how the kernel split a cell's printing."""

from nbformat.v4 import new_output

from tools.execute import merged_streams


def test_consecutive_writes_to_a_stream_are_one_output_in_order():
    outputs = [new_output("stream", name="stdout", text="0 0.53\n"),
               new_output("stream", name="stdout", text="1 0.41\n"),
               new_output("stream", name="stderr", text="warning\n"),
               new_output("display_data", data={"text/plain": "<Figure>"}),
               new_output("stream", name="stdout", text="2 0.35\n"),
               new_output("stream", name="stdout", text="3 0.32\n")]
    merged = merged_streams(outputs)
    assert [(o.output_type, o.get("name"), o.get("text")) for o in merged] == [
        ("stream", "stdout", "0 0.53\n1 0.41\n"), ("stream", "stderr", "warning\n"),
        ("display_data", None, None), ("stream", "stdout", "2 0.35\n3 0.32\n")]
