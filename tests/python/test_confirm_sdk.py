"""The person confirms a merge (issue 51) through the official MCP Python SDK's elicitation callback.

bb runs over stdio against the local Bitbucket stand-in with the tools that cannot be undone exposed. The
SDK's `ClientSession` declares elicitation because it is given an `elicitation_callback`; the callback is the
person: it records bb's question and answers it. A decline writes nothing; an acceptance with the box ticked
merges. Nothing here turns asking off.

Run: python -m unittest discover -s tests/python -v (from the repository root); binaries as test_oauth_sdk.py finds them.
"""

import os
import subprocess
import unittest

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from test_oauth_sdk import Lines, binary, ROOT

WAIT = 60


class ConfirmWithThePythonSdk(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bb, cls.stack_bin = binary("BB_BIN", "bb"), binary("BB_STACK_BIN", "bb-stack")
        if not cls.bb.exists() or not cls.stack_bin.exists():
            subprocess.run(["cargo", "build", "-q", "-p", "bb", "-p", "bb-stack"], cwd=ROOT, check=True)
        cls.stack = subprocess.Popen([str(cls.stack_bin), "--port", "0"], stdout=subprocess.PIPE)
        out = Lines(cls.stack.stdout, "bb-stack")
        cls.url, cls.token = out.first(), out.first()

    @classmethod
    def tearDownClass(cls):
        cls.stack.terminate()
        cls.stack.wait(timeout=WAIT)

    def run_as_person(self, answer, tool, arguments):
        """Calls `tool` over stdio with a session whose person answers with `answer`; (result, questions, state of PR #11)."""
        asked = []

        async def person(_context, params):
            asked.append(params)
            return answer

        async def go():
            server = StdioServerParameters(
                command=str(self.bb),
                args=["ai", "mcp", "serve", "--allow-writes", "--log-level", "off"],
                env={**os.environ, "BITBUCKET_URL": self.url, "BITBUCKET_TOKEN": self.token},
            )
            with anyio.fail_after(WAIT):
                async with stdio_client(server) as (read, write):
                    async with ClientSession(read, write, elicitation_callback=person) as session:
                        await session.initialize()
                        result = await session.call_tool(tool, arguments)
                        pr = await session.call_tool("get_pull_request", {"project": "BB", "repo": "api", "pr_id": 11})
                        return result, pr

        result, pr = anyio.run(go)
        text = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
        return text, asked, "\n".join(c.text for c in pr.content if isinstance(c, types.TextContent))

    def test_a_decline_merges_nothing_then_a_ticked_box_merges(self):
        merge = {"project": "BB", "repo": "api", "pr_id": 11, "version": 0}
        text, asked, pr = self.run_as_person(types.ElicitResult(action="decline"), "merge_pull_request", merge)
        self.assertTrue(text.startswith("The person declined: nothing was merged."), text)
        self.assertEqual(len(asked), 1)
        box = asked[0].requestedSchema["properties"]["confirm"]
        self.assertEqual(box["type"], "boolean")
        self.assertEqual(box["title"], "Merge #11 into main")
        self.assertEqual(asked[0].requestedSchema["required"], ["confirm"])
        self.assertIn("OPEN", pr)

        yes = types.ElicitResult(action="accept", content={"confirm": True})
        text, asked, pr = self.run_as_person(yes, "merge_pull_request", merge)
        self.assertTrue(text.startswith("Merged PR #11 into main"), text)
        self.assertEqual(len(asked), 1)
        self.assertIn("MERGED", pr)


if __name__ == "__main__":
    unittest.main()
