/** What `GET /api/projects/{project}/check` answers, as the tests read it. */
export interface Finding {
  kind: string;
  message: string;
}

export interface Check {
  status: string;
  layers: { name: string; status: string; findings: Finding[] }[];
  findings: Finding[];
}
