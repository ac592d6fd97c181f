import { describe, expect, it } from "vitest";
import type { ModelEvent } from "../src/types.js";
import { collect, shapeOf, testIds } from "./support/events.js";

describe("the event test helpers", () => {
  it("collect keeps the events before a failure and the failure itself", async () => {
    const first: ModelEvent = { type: "text", text: "a" };
    async function* failing() {
      yield first;
      throw Object.assign(new Error("boom"), { type: "api_error" });
    }
    const { out, error } = await collect(failing());
    expect(out).toEqual([first]);
    expect(shapeOf(error)).toEqual({ name: "Error", type: "api_error", message: "boom" });
  });

  it("testIds numbers fresh ids and keeps the taken ones", () => {
    const ids = testIds(["x"]);
    expect([ids.newId(), ids.newId(), ids.taken.has("x")]).toEqual(["gen_0", "gen_1", true]);
  });
});
