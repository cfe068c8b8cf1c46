"""Drive hermesd's OpenAI-compatible API server with the official `openai` SDK (and httpx, which
the SDK is built on, for what the SDK cannot send: a missing key, broken JSON, a huge body).

    python api_client.py BASE_URL KEY SCENARIO

Prints one JSON document of what it saw; tests/tests/api_server.rs checks it.
"""

import json
import sys
import time

import httpx
import openai

BASE, KEY, SCENARIO = sys.argv[1], sys.argv[2], sys.argv[3]
client = openai.OpenAI(base_url=BASE + "/v1", api_key=KEY, max_retries=0, timeout=60)


def wait_for_go():
    """Blocks until the test writes a line on stdin: it does once the model has the first request,
    so what follows can rely on that request being the one that waits."""
    if not sys.stdin.readline():
        raise SystemExit("stdin closed before the test said go")


def chat():
    out = {}
    raw = client.chat.completions.with_raw_response.create(
        model="hermes-agent", messages=[{"role": "user", "content": "say hi from the shell"}]
    )
    completion = raw.parse()
    out["plain"] = {
        "text": completion.choices[0].message.content,
        "finish": completion.choices[0].finish_reason,
        "object": completion.object,
        "id": completion.id,
        "session": raw.headers.get("x-hermes-session-id"),
        "usage": completion.usage.total_tokens,
    }
    # Streaming, continued in the same conversation by header.
    with client.chat.completions.with_streaming_response.create(
        model="hermes-agent",
        messages=[{"role": "user", "content": "and again, streamed"}],
        stream=True,
        stream_options={"include_usage": True},
        extra_headers={"X-Hermes-Session-Id": out["plain"]["session"]},
    ) as response:
        chunks = list(response.parse())
        session = response.headers.get("x-hermes-session-id")
    out["stream"] = {
        "session": session,
        "roles": [c.choices[0].delta.role for c in chunks if c.choices and c.choices[0].delta.role],
        "text": "".join(c.choices[0].delta.content or "" for c in chunks if c.choices),
        "finish": [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason],
        "usage_last": chunks[-1].usage is not None and not chunks[-1].choices,
        "objects": sorted({c.object for c in chunks}),
    }
    # Open WebUI's way: the whole history again, no header.
    history = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "first question"},
    ]
    first = client.chat.completions.with_raw_response.create(model="x", messages=history)
    history += [
        {"role": "assistant", "content": first.parse().choices[0].message.content},
        {"role": "user", "content": "second question"},
    ]
    second = client.chat.completions.with_raw_response.create(model="x", messages=history)
    out["resend"] = [
        first.headers.get("x-hermes-session-id"),
        second.headers.get("x-hermes-session-id"),
        second.parse().choices[0].message.content,
    ]
    out["models"] = [m.id for m in client.models.list().data]
    return out


def errors():
    out = {}
    try:
        openai.OpenAI(base_url=BASE + "/v1", api_key="wrong-key-wrong-key", max_retries=0).models.list()
    except openai.AuthenticationError as e:
        out["wrong_key"] = [e.status_code, e.body.get("code") if isinstance(e.body, dict) else None]
    r = httpx.get(BASE + "/v1/models")
    out["missing_key"] = [r.status_code, r.json()["error"]["type"]]
    auth = {"Authorization": "Bearer " + KEY, "Content-Type": "application/json"}
    r = httpx.post(BASE + "/v1/chat/completions", headers=auth, content=b'{"messages": [')
    out["bad_json"] = [r.status_code, r.json()["error"]["message"]]
    r = httpx.post(BASE + "/v1/chat/completions", headers=auth, content=b'{"model": "x"}')
    out["no_messages"] = [r.status_code, r.json()["error"]["param"]]
    big = b'{"messages": [{"role": "user", "content": "' + b"x" * 10_000_001 + b'"}]}'
    r = httpx.post(BASE + "/v1/chat/completions", headers=auth, content=big, timeout=60)
    out["too_large"] = [r.status_code, "error" in r.json()]
    r = httpx.get(BASE + "/v1/nothing-here", headers=auth)
    out["not_found"] = [r.status_code, r.json()["error"]["code"]]
    r = httpx.get(BASE + "/health")
    out["health"] = [r.status_code, r.json()["status"]]
    r = httpx.get(BASE + "/v1/capabilities", headers=auth)
    out["capabilities"] = r.json()["object"]
    return out


def busy():
    """With max_concurrent_runs 1, a run that waits on the model holds the only permit."""
    auth = {"Authorization": "Bearer " + KEY}
    r = httpx.post(BASE + "/v1/runs", headers=auth, json={"input": "slow one"})
    assert r.status_code == 202, r.text
    run_id = r.json()["run_id"]
    wait_for_go()
    out = {}
    try:
        client.chat.completions.create(model="x", messages=[{"role": "user", "content": "second"}])
        out["status"] = 200
    except openai.RateLimitError as e:
        out = {"status": e.status_code, "retry_after": e.response.headers.get("retry-after"),
               "type": e.body.get("type") if isinstance(e.body, dict) else None}
    stop = httpx.post(f"{BASE}/v1/runs/{run_id}/stop", headers=auth)
    out["stop"] = stop.json()["status"]
    with httpx.stream("GET", f"{BASE}/v1/runs/{run_id}/events", headers=auth, timeout=60) as stream:
        for line in stream.iter_lines():
            if line.startswith("data: ") and json.loads(line[6:])["event"].startswith("run."):
                out["ended"] = json.loads(line[6:])["event"]
                break
    # The permit is back once the run ended.
    c = client.chat.completions.create(model="x", messages=[{"role": "user", "content": "third"}])
    out["after"] = c.choices[0].message.content
    return out


def run_end(run_id, auth):
    """How run `run_id` ended: the name of its first run.* event."""
    with httpx.stream("GET", f"{BASE}/v1/runs/{run_id}/events", headers=auth, timeout=60) as stream:
        for line in stream.iter_lines():
            if line.startswith("data: ") and json.loads(line[6:])["event"].startswith("run."):
                return json.loads(line[6:])["event"]


def stop_queued():
    """Two runs on one session: the second queues behind the first. Stopping the queued one stops
    it alone, and it never reaches the model; then the first is stopped too."""
    auth = {"Authorization": "Bearer " + KEY}
    runs = []
    for text in ["first run", "second run"]:
        r = httpx.post(BASE + "/v1/runs", headers=auth,
                       json={"input": text, "session_id": "shared-run-session"})
        assert r.status_code == 202, r.text
        runs.append(r.json()["run_id"])
    first, second = runs
    out = {"stop_second": httpx.post(f"{BASE}/v1/runs/{second}/stop", headers=auth).json()["status"]}
    out["stop_first"] = httpx.post(f"{BASE}/v1/runs/{first}/stop", headers=auth).json()["status"]
    out["first"] = run_end(first, auth)
    out["second"] = run_end(second, auth)
    return out


def run_approval():
    auth = {"Authorization": "Bearer " + KEY}
    r = httpx.post(BASE + "/v1/runs", headers=auth, json={"input": "clean up the scratch dir"})
    assert r.status_code == 202, r.text
    run_id = r.json()["run_id"]
    events = []
    with httpx.stream("GET", f"{BASE}/v1/runs/{run_id}/events", headers=auth, timeout=60) as stream:
        for line in stream.iter_lines():
            if not line.startswith("data: "):
                continue
            event = json.loads(line[6:])
            events.append(event)
            if event["event"] == "approval.request":
                a = httpx.post(f"{BASE}/v1/runs/{run_id}/approval", headers=auth, json={"choice": "once"})
                events.append({"event": "(answered)", "status": a.status_code, "body": a.json()})
            if event["event"] in ("run.completed", "run.failed", "run.cancelled"):
                break
    status = httpx.get(f"{BASE}/v1/runs/{run_id}", headers=auth).json()
    again = httpx.post(f"{BASE}/v1/runs/{run_id}/approval", headers=auth, json={"choice": "once"})
    return {"run_id": run_id, "events": events, "status": status,
            "late_approval": [again.status_code, again.json()["error"]["code"]]}


def disconnect():
    """Read the first text chunk of a stream, then hang up."""
    stream = client.chat.completions.create(
        model="x", messages=[{"role": "user", "content": "a long story please"}], stream=True
    )
    seen = ""
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            seen += chunk.choices[0].delta.content
            break
    stream.close()
    return {"seen": seen, "session": None}


def responses():
    first = client.responses.create(model="hermes-agent", input="remember the word tangerine")
    second = client.responses.create(
        model="hermes-agent", input="which word?", previous_response_id=first.id
    )
    fetched = client.responses.retrieve(first.id)
    client.responses.delete(first.id)
    try:
        client.responses.retrieve(first.id)
        gone = None
    except openai.NotFoundError as e:
        gone = e.status_code
    try:
        client.responses.create(model="x", input="hi", previous_response_id="resp_nope")
        unknown = None
    except openai.NotFoundError as e:
        unknown = e.status_code
    return {
        "first": [first.id, first.object, first.status, first.output_text],
        "second": [second.output_text, second.previous_response_id],
        "fetched": fetched.output_text,
        "gone": gone,
        "unknown_previous": unknown,
    }


print(json.dumps(globals()[SCENARIO]()))
