"""What the serve tests share: one HTTP request to a mixseq serve on this machine (127.0.0.1)."""
import http.client
import json


def request(port, method, path, body=None, timeout=60):
    """(status, parsed JSON body); body may be bytes or a JSON-able value."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    if body is not None and not isinstance(body, bytes):
        body = json.dumps(body).encode("utf-8")
    connection.request(method, path, body=body, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    status, data = response.status, response.read()
    connection.close()
    return status, json.loads(data)
