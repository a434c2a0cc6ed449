// The types constrain: each misuse below must be an error (an unused @ts-expect-error is one too,
// so a package whose types were `any` fails here). Compiled in test_typescript.py's scratch project.
import { Client, TodaysimError } from "todaysim";
import type { SessionView } from "todaysim";

export async function misuse(todaysim: Client): Promise<void> {
  // @ts-expect-error: no such gesture
  await todaysim.gesture("s1", { type: "pul" });
  // @ts-expect-error: a clock move is a number of ms
  await todaysim.clock("s1", { advanceMs: "5s" });
  const view: SessionView = await todaysim.readSession("s1");
  // @ts-expect-error: the view has no such field
  view.pullState;
  // @ts-expect-error: a step holds one input key, named as the API names it
  await todaysim.steps("s1", [{ gestures: { type: "pull" } }]);
  const error = new TodaysimError(400, "invalid_field", "x", { field: "f" });
  // @ts-expect-error: status is a number
  const status: string = error.status;
  void status;
}
