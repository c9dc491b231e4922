// Test fixtures: real voxcol servers on loopback ports, TLS material, the CLI.
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

export const SERVER = process.env.VOXCOL_SERVER ?? "/work/helper-bin/voxcol_server";
export const CLI = process.env.VOXCOL_CLI ?? "/work/helper-bin/voxcol";

const execFileAsync = promisify(execFile);

export function scratchDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `voxcol-ts-${prefix}-`));
}

export interface ServerOptions {
  /** Extra flags, e.g. TLS. */
  flags?: string[];
  /** Reuse this data directory (restart) and this port. */
  dataDir?: string;
  port?: number;
}

/** One voxcol_server process on a loopback port with its own data directory. */
export class TestServer {
  readonly dir: string;
  readonly dataDir: string;
  port = 0;
  private process: ChildProcess | undefined;
  private readonly flags: string[];

  private constructor(dir: string, dataDir: string, flags: string[]) {
    this.dir = dir;
    this.dataDir = dataDir;
    this.flags = flags;
  }

  static async start(options: ServerOptions = {}): Promise<TestServer> {
    const dir = scratchDir("server");
    const server = new TestServer(dir, options.dataDir ?? join(dir, "data"), options.flags ?? []);
    await server.launch(options.port ?? 0);
    return server;
  }

  get target(): string {
    return `127.0.0.1:${this.port}`;
  }

  private async launch(port: number): Promise<void> {
    const portFile = join(this.dir, `port-${Date.now()}`);
    const log = join(this.dir, "server.log");
    mkdirSync(join(this.dir, "backups"), { recursive: true });
    this.process = spawn(
      SERVER,
      [
        `--data_dir=${this.dataDir}`,
        "--world_size=128,96,128",
        `--listen=127.0.0.1:${port}`,
        `--port_file=${portFile}`,
        "--metrics_listen=127.0.0.1:0",
        `--backup_root=${join(this.dir, "backups")}`,
        ...this.flags,
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    const stderr: Buffer[] = [];
    this.process.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));
    const exited = new Promise<number | null>((resolve) => this.process?.once("exit", resolve));
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (existsSync(portFile)) {
        const text = readFileSync(portFile, "utf8").trim();
        if (text !== "") {
          this.port = Number(text);
          return;
        }
      }
      const code = await Promise.race([exited, new Promise<"wait">((r) => setTimeout(() => r("wait"), 50))]);
      if (code !== "wait") {
        writeFileSync(log, Buffer.concat(stderr));
        throw new Error(`voxcol_server exited (${String(code)}): ${Buffer.concat(stderr).toString().slice(-2000)}`);
      }
      if (Date.now() > deadline) throw new Error("voxcol_server did not write its port file in 20 s");
    }
  }

  /** Stops the process (SIGTERM, then SIGKILL) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  }

  /** Stops and starts the server again on the same port and data directory. */
  async restart(): Promise<void> {
    await this.stop();
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        await this.launch(this.port);
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error; // the port may linger for a moment
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Runs the voxcol CLI with --json against `target` and parses its output. */
export async function cliJson(target: string, args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await execFileAsync(CLI, [...args, `--server=${target}`, "--json"], { timeout: 20_000 });
  return JSON.parse(stdout) as Record<string, unknown>;
}

export interface TlsMaterial {
  dir: string;
  caPem: string;
  caFile: string;
  otherCaPem: string;
  certFile: string;
  keyFile: string;
  tokensFile: string;
  tokens: { query: string; edit: string; admin: string };
}

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

/** A throwaway CA, a server certificate for 127.0.0.1/localhost, and a token file. */
export function makeTls(): TlsMaterial {
  const dir = scratchDir("tls");
  for (const ca of ["ca", "other-ca"]) {
    openssl(dir, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", `${ca}.key`, "-out", `${ca}.crt`,
      "-days", "2", "-subj", `/CN=voxcol test ${ca}`]);
  }
  writeFileSync(join(dir, "ext.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n");
  openssl(dir, ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"]);
  openssl(dir, ["x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
    "-out", "server.crt", "-days", "2", "-extfile", "ext.cnf"]);
  const tokens = {
    query: randomBytes(16).toString("hex"),
    edit: randomBytes(16).toString("hex"),
    admin: randomBytes(16).toString("hex"),
  };
  const sha = (token: string) => createHash("sha256").update(token).digest("hex");
  writeFileSync(
    join(dir, "tokens"),
    `${sha(tokens.query)} query q-user\n${sha(tokens.edit)} edit e-user\n${sha(tokens.admin)} admin a-user\n`,
  );
  return {
    dir,
    caPem: readFileSync(join(dir, "ca.crt"), "utf8"),
    caFile: join(dir, "ca.crt"),
    otherCaPem: readFileSync(join(dir, "other-ca.crt"), "utf8"),
    certFile: join(dir, "server.crt"),
    keyFile: join(dir, "server.key"),
    tokensFile: join(dir, "tokens"),
    tokens,
  };
}

export function tlsFlags(tls: TlsMaterial): string[] {
  return [`--tls_cert=${tls.certFile}`, `--tls_key=${tls.keyFile}`, `--auth_tokens=${tls.tokensFile}`];
}

/** A ray straight down from y 40 at (x, z), inside the 128x96x128 test world. */
export function downRay(x: number, z: number) {
  return { origin: { x, y: 40, z }, direction: { x: 0, y: -1, z: 0 }, maxDistance: 90 };
}

/** Math.fround: the float32 the server sees for `value`. */
export const f32 = Math.fround;
