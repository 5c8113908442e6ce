/**
 * Trinity's FrozenLake game around Gymnasium's rules (trinity/common/workflows/envs/frozen_lake/workflow.py @8b7fce3,
 * utils.py @1764513; both adapted from rLLM): its own action numbering (0 still/invalid, 1 left, 2 down, 3 right,
 * 4 up, mapped to Gymnasium's 0-3), the text observation the model reads, and how a response becomes an action.
 */
import { GymFrozenLake } from './gym-frozen-lake';

/** Trinity's `SYSTEM_PROMPT` (utils.py), the model's instructions; the observation format below depends on it. */
export const FROZEN_LAKE_SYSTEM_PROMPT = `You are Qwen, created by Alibaba Cloud. You are a helpful assistant. You are walking on a frozen lake.

FrozenLake Quick Guide
Goal: Reach the goal (G). Player (P) and Goal (G) must overlap.

Symbols:
_ Frozen | O Hole | G Goal | P Player

Rules:
1. Avoid falling into holes (O).
2. Frozen tiles are slippery, you may move perpendicular to your intended direction.

Valid Action (separated by | ):
Up | Down | Left | Right

Rewards:
Fall into hole: 0
Reach goal: +1.0

You will be provided the current observation, please decide on the next Action.
You should show your thought process and then input the final action in \`\`\` \`\`\`.
You should only output the NEXT ACTION at each interation in the \`\`\` \`\`\`. For example, if you want to move up, you should output \`\`\`Up\`\`\`.
You should plan ahead and need to achieve it in minimum number of steps.
You should be aware that frozen tiles can be slippery, but the chance is small and you should not overthink it.

Please show your thinking process and put the final action in \`\`\` \`\`\`. In every turn, the final action MUST be one of Up, Down, Left, Right.
`;

/** The hint Trinity appends when the last action left the observation unchanged (workflow.py `run_async`). */
export const FROZEN_LAKE_INVALID_HINT =
  "Your last response is invalid. Your position didn't change at all. You may need to recheck your thinking process, action outputted, and the format of response. Remember, you should only output the NEXT ACTION at each interation in the ``` ```. For example, if you want to move up, you should output ```Up```.";

export const INVALID_ACTION = 0;
/** Trinity's action (1 left, 2 down, 3 right, 4 up) → Gymnasium's (0 left, 1 down, 2 right, 3 up). */
const TO_GYM: Readonly<Record<number, number>> = { 1: 0, 2: 1, 3: 2, 4: 3 };
const DIRECTIONS: Readonly<Record<string, number>> = { left: 1, down: 2, right: 3, up: 4 };

/** utils.py `GRID_LOOKUP`: each cell's text in the observation. */
const CELL_TEXT = {
  player: ' P \t',
  frozen: ' _ \t',
  hole: ' O \t',
  goal: ' G \t',
  playerInHole: ' X \t',
  playerOnGoal: ' √ \t',
} as const;

export interface GameStep {
  observation: string;
  reward: number;
  done: boolean;
  /** Whether the player moved (Trinity's `action_is_effective`). */
  moved: boolean;
}

/**
 * `_parse_model_response`: the last ```…``` block of the response, trimmed and lower-cased; left/down/right/up or the
 * digits 1-4 name an action, anything else (or no block) is the invalid action 0.
 */
export function parseFrozenLakeAction(response: string): number {
  const blocks = [...response.matchAll(/```([\s\S]*?)```/g)];
  if (blocks.length === 0) return INVALID_ACTION;
  const text = blocks[blocks.length - 1][1].trim().toLowerCase();
  if (Object.hasOwn(DIRECTIONS, text)) return DIRECTIONS[text];
  if (/^[0-9]+$/.test(text) && Object.values(DIRECTIONS).includes(Number(text))) return Number(text);
  return INVALID_ACTION;
}

export class FrozenLakeGame {
  readonly env: GymFrozenLake;

  constructor(
    rows: readonly string[],
    isSlippery: boolean,
    private readonly seed: number,
  ) {
    this.env = new GymFrozenLake(rows, isSlippery);
  }

  /** `gym_env.reset(seed=seed)`: the player back on S, the slippery draws restarted; the first observation. */
  reset(): string {
    this.env.reset(this.seed);
    return this.render();
  }

  /** The player's cell is G or H. */
  finished(): boolean {
    return 'GH'.includes(this.env.letter(this.env.s));
  }

  success(): boolean {
    return this.env.letter(this.env.s) === 'G';
  }

  /**
   * `env_step`: on the goal already, reward 1 and done; the invalid action (or one outside 1-4) changes nothing,
   * reward 0, not done; else Gymnasium's step.
   */
  step(action: number): GameStep {
    if (this.success()) return { observation: this.render(), reward: 1, done: true, moved: false };
    if (!Object.hasOwn(TO_GYM, action)) return { observation: this.render(), reward: 0, done: false, moved: false };
    const before = this.env.s;
    const r = this.env.step(TO_GYM[action]);
    return { observation: this.render(), reward: r.reward, done: r.terminated, moved: r.state !== before };
  }

  /** `render("tiny_rgb_array")`: S shown as frozen, the player as P (X in a hole, √ on the goal), a row per line. */
  render(): string {
    const { nrow, ncol, s } = this.env;
    const lines: string[] = [];
    for (let r = 0; r < nrow; r++) {
      let line = '';
      for (let c = 0; c < ncol; c++) {
        const letter = this.env.desc[r][c];
        if (r * ncol + c === s)
          line += letter === 'H' ? CELL_TEXT.playerInHole : letter === 'G' ? CELL_TEXT.playerOnGoal : CELL_TEXT.player;
        else line += letter === 'H' ? CELL_TEXT.hole : letter === 'G' ? CELL_TEXT.goal : CELL_TEXT.frozen;
      }
      lines.push(line);
    }
    return lines.join('\n');
  }
}
