// Configuration and skills at start-up: the time from spawning `mini-agent "task"` to its first
// model request with nothing configured, with a user config.json and a trusted project
// .mini-agent/config.json, and with 300 user skills (each a folder with a SKILL.md): with the
// skill cache the runs before made, and without one (each run's cache removed first, as a first
// run finds it), side by side in one run.
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export async function configBench({ run, row, ms, median, scratch, bin, runs, startMockServer }) {
  const server = await startMockServer();
  const setups = {};
  for (const name of ["none", "config", "skills", "cold"]) {
    const work = join(scratch, `config-${name}`);
    const home = join(scratch, `config-${name}-home`);
    mkdirSync(work, { recursive: true });
    mkdirSync(home, { recursive: true });
    writeFileSync(join(work, "notes.txt"), "hello\n");
    setups[name] = {
      work,
      env: {
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: "bench-key",
        MINI_AGENT_HOME: home,
      },
    };
  }
  const config = setups.config;
  writeFileSync(
    join(config.env.MINI_AGENT_HOME, "config.json"),
    JSON.stringify({
      model: "claude-sonnet-5-5",
      thinking: "off",
      maxTurns: 30,
      sandbox: { limits: { processes: 512, memory: "4G" } },
      rules: { allow: ["npm test", "git status"], deny: ["git push"] },
    }),
  );
  mkdirSync(join(config.work, ".mini-agent"));
  writeFileSync(
    join(config.work, ".mini-agent", "config.json"),
    JSON.stringify({
      contextWindow: 100000,
      rules: { deny: ["rm -rf"] },
      sandbox: { hide: ["secrets"] },
    }),
  );
  const trusted = spawnSync(process.execPath, [bin, "trust"], {
    cwd: config.work,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...config.env },
  });
  if (trusted.status !== 0) throw new Error(`mini-agent trust: ${trusted.stderr}`);
  for (const setup of [setups.skills, setups.cold]) {
    const skills = join(setup.env.MINI_AGENT_HOME, "skills");
    for (let i = 0; i < 300; i++) {
      const name = `skill-${String(i).padStart(3, "0")}`;
      mkdirSync(join(skills, name), { recursive: true });
      writeFileSync(
        join(skills, name, "SKILL.md"),
        `---\nname: ${name}\ndescription: What skill ${i} is for, in a sentence or two, as skills say it.\n---\nSteps.\n`,
      );
    }
  }
  // Skill files are older than a second when a run first meets them, as they are in use: the
  // cache takes no entry made in the second its file last changed.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  setups.cold.before = () =>
    rmSync(join(setups.cold.env.MINI_AGENT_HOME, "cache"), { recursive: true, force: true });
  const firstRequest = async ({ work, env, before }) => {
    before?.();
    server.requests.length = 0;
    const start = performance.now();
    await run(process.execPath, [bin, "what do the notes say?"], { cwd: work, env });
    return server.requests[0].at - start;
  };
  const names = ["none", "config", "skills", "cold"];
  const samples = names.map(() => []);
  for (let i = -1; i < runs; i++) {
    for (const [j, name] of names.entries()) {
      const value = await firstRequest(setups[name]);
      if (i >= 0) samples[j].push(value);
    }
  }
  const [none, withConfig, withSkills, cold] = samples.map(median);
  const over = (value) => `${(value / none).toFixed(2)}×`;
  const floor = `${ms(none)} (nothing configured)`;
  row(
    "time to first model request, a user and a trusted project config file",
    ms(withConfig),
    floor,
    over(withConfig),
    "within noise",
  );
  row(
    "time to first model request, 300 user skills",
    ms(withSkills),
    floor,
    over(withSkills),
    "within noise",
  );
  row(
    "time to first model request, 300 user skills, no skill cache (a first run)",
    ms(cold),
    floor,
    over(cold),
    "",
  );
  server.close();
}
