"""The SDK side of bench-api: the same `openai` SDK calls against any OpenAI-compatible server
(hermesd's API server, or Python Hermes' for the ratio).

    python api_bench.py BASE_URL KEY COUNT CONCURRENT

COUNT chat completions one after another, each a new conversation whose turn runs one tool
call (the bench's fake model asks for it), then CONCURRENT streamed completions at once.
Prints one JSON document: {"sequential": [seconds, ...], "concurrent": {"n", "finished",
"seconds"}}.
"""

import json
import sys
import threading
import time
import uuid

import openai

BASE, KEY = sys.argv[1], sys.argv[2]
COUNT, CONCURRENT = int(sys.argv[3]), int(sys.argv[4])
client = openai.OpenAI(base_url=BASE + "/v1", api_key=KEY, max_retries=0, timeout=300)


def ask(text):
    # A fresh first message each time: a new conversation, as a new chat in a front end.
    return [{"role": "user", "content": f"{text} ({uuid.uuid4().hex})"}]


sequential = []
for i in range(COUNT):
    started = time.perf_counter()
    completion = client.chat.completions.create(model="hermes-agent", messages=ask(f"run {i}"))
    sequential.append(time.perf_counter() - started)
    if not completion.choices[0].message.content:
        sys.exit(f"completion {i} came back empty")

finished = []


def stream(i):
    chunks = client.chat.completions.create(
        model="hermes-agent", messages=ask(f"stream {i}"), stream=True
    )
    if any(c.choices and c.choices[0].finish_reason == "stop" for c in chunks):
        finished.append(i)


threads = [threading.Thread(target=stream, args=(i,)) for i in range(CONCURRENT)]
started = time.perf_counter()
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
elapsed = time.perf_counter() - started

print(json.dumps({
    "sequential": sequential,
    "concurrent": {"n": CONCURRENT, "finished": len(finished), "seconds": elapsed},
}))
