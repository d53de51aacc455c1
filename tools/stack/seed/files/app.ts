// @NAME@ web client: fetches pages from the @SLUG@ API and keeps a small cache.

export interface Page<T> {
  values: T[];
  size: number;
  isLastPage: boolean;
  start: number;
  nextPageStart?: number;
}

export interface Project {
  key: string;
  name: string;
  description?: string;
}

export interface Repository {
  slug: string;
  name: string;
  project: Project;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(`HTTP ${status}: ${message}`);
  }
}

const DEFAULT_LIMIT = 25;

export class ApiClient {
  private readonly cache = new Map<string, { at: number; value: unknown }>();

  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly ttlMs = 30_000,
  ) {}

  private headers(): Record<string, string> {
    return {
      Accept: "application/json",
      Authorization: `Bearer ${this.token}`,
    };
  }

  async get<T>(path: string, query: Record<string, string | number> = {}): Promise<T> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) params.set(k, String(v));
    const url = `${this.baseUrl}${path}${params.size ? `?${params}` : ""}`;
    const hit = this.cache.get(url);
    if (hit && Date.now() - hit.at < this.ttlMs) return hit.value as T;
    const response = await fetch(url, { headers: this.headers() });
    if (!response.ok) {
      const text = await response.text();
      throw new HttpError(response.status, text.slice(0, 200));
    }
    const value = (await response.json()) as T;
    this.cache.set(url, { at: Date.now(), value });
    return value;
  }

  async *pages<T>(path: string, limit = DEFAULT_LIMIT): AsyncGenerator<T[]> {
    let start = 0;
    for (;;) {
      const page = await this.get<Page<T>>(path, { start, limit });
      yield page.values;
      if (page.isLastPage) return;
      start = page.nextPageStart ?? start + page.size;
    }
  }

  async all<T>(path: string): Promise<T[]> {
    const out: T[] = [];
    for await (const values of this.pages<T>(path)) out.push(...values);
    return out;
  }

  projects(): Promise<Project[]> {
    return this.all<Project>("/rest/api/latest/projects");
  }

  repositories(projectKey: string): Promise<Repository[]> {
    return this.all<Repository>(`/rest/api/latest/projects/${encodeURIComponent(projectKey)}/repos`);
  }

  clear(): void {
    this.cache.clear();
  }
}

export function describe(repo: Repository): string {
  const project = repo.project.name || repo.project.key;
  return `${project} / ${repo.name}`;
}

export function byName(a: Repository, b: Repository): number {
  return a.name.localeCompare(b.name, undefined, { sensitivity: "base" });
}

export async function main(baseUrl: string, token: string): Promise<void> {
  const client = new ApiClient(baseUrl, token);
  const projects = await client.projects();
  for (const project of projects) {
    const repos = await client.repositories(project.key);
    repos.sort(byName);
    for (const repo of repos) console.log(describe(repo));
  }
}
