/** Identities and what they may do: tokens, roles, whoami and the audit log (docs/access.md). */
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { OWS_SERVICES } from '../../access/records.js';
import { type AccessService } from '../../access/service.js';
import { NotFound } from '../../errors.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses } from '../schemas.js';

const tags = ['access'];

const RoleNames = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100 });
const DateTime = Type.String({ format: 'date-time' });

const NewTokenBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Who or what the token is for' }),
    roles: RoleNames,
    expires: Type.Optional(Type.Union([DateTime, Type.Null()], { description: 'Never, when absent or null' })),
  },
  { additionalProperties: false },
);

const TokenInfo = Type.Object({
  id: Type.String(),
  name: Type.String(),
  roles: Type.Array(Type.String()),
  created: DateTime,
  expires: Type.Union([DateTime, Type.Null()]),
  expired: Type.Boolean(),
});

const CreatedToken = Type.Object({
  id: Type.String(),
  token: Type.String({ description: 'The secret, answered this once: present it as Authorization: Bearer <token>' }),
  name: Type.String(),
  roles: Type.Array(Type.String()),
  expires: Type.Union([DateTime, Type.Null()]),
});

const LayerRule = Type.Object(
  {
    read: Type.Optional(Type.Boolean({ description: 'false hides the layer' })),
    hidden_attributes: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 1000, uniqueItems: true }),
    ),
    filter: Type.Optional(
      Type.String({ minLength: 1, maxLength: 10_000, description: 'A QGIS expression the features served match' }),
    ),
  },
  { additionalProperties: false },
);

const ProjectRule = Type.Object(
  {
    access: Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('admin')]),
    layers: Type.Optional(Type.Record(Type.String({ maxLength: 255 }), LayerRule, { maxProperties: 10_000 })),
  },
  { additionalProperties: false },
);

export const Role = Type.Object(
  {
    admin: Type.Optional(
      Type.Boolean({ description: 'Administrators: tokens, roles, audit, instances, every project' }),
    ),
    projects: Type.Optional(
      Type.Record(Type.String({ maxLength: 512 }), ProjectRule, {
        maxProperties: 10_000,
        description: 'By project: name (schema public), schema/name, schema/* or *',
      }),
    ),
    services: Type.Optional(
      Type.Partial(Type.Object(Object.fromEntries(OWS_SERVICES.map((name) => [name, Type.Boolean()]))), {
        additionalProperties: false,
        description: 'false refuses a service or operation of QGIS Server',
      }),
    ),
  },
  { additionalProperties: false },
);

const CodeExchange = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 4096 }),
    code_verifier: Type.String({ minLength: 43, maxLength: 128, pattern: '^[A-Za-z0-9._~-]+$' }),
    redirect_uri: Type.String({ minLength: 1, maxLength: 2048 }),
  },
  { additionalProperties: false },
);

const LoginTokens = Type.Object({
  access_token: Type.String({ description: 'The bearer token for this API' }),
  expires_in: Type.Union([Type.Integer(), Type.Null()], { description: 'Seconds it lives, when the provider says' }),
});

const RoleParams = Type.Object({ role: Type.String({ maxLength: 64 }) });
const TokenParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

const Whoami = Type.Object({
  name: Type.String(),
  roles: Type.Array(Type.String()),
  admin: Type.Boolean(),
  kind: Type.Union(
    [
      Type.Literal('bootstrap'),
      Type.Literal('token'),
      Type.Literal('oidc'),
      Type.Literal('anonymous'),
      Type.Literal('tile-cache'),
      Type.Literal('open'),
    ],
    { description: 'How the identity was known: open when access control is off' },
  ),
});

const AuthConfig = Type.Object({
  oidc: Type.Union([
    Type.Object({
      issuer: Type.String({ description: 'The OpenID provider, whose discovery document the console reads' }),
      client_id: Type.String({ description: "The console's public client (authorization code flow with PKCE)" }),
      audience: Type.String({ description: 'The audience the API checks in the tokens' }),
      scope: Type.String(),
      authorization_endpoint: Type.String({ description: "The provider's, where the console sends the person" }),
    }),
    Type.Null(),
  ]),
});

const AuditQuery = Type.Object(
  {
    project: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    schema: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    who: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Entries at or after this time' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Entries before this time' })),
    limit: Type.Optional(
      Type.String({ pattern: '^[1-9][0-9]{0,3}$', description: 'At most this many entries, 1 to 9999 (default 100)' }),
    ),
  },
  { additionalProperties: false },
);

const AuditEntry = Type.Object({
  at: DateTime,
  who: Type.Union([Type.String(), Type.Null()]),
  token: Type.Union([Type.String(), Type.Null()]),
  method: Type.String(),
  route: Type.String(),
  path: Type.String(),
  project: Type.Union([Type.String(), Type.Null()]),
  schema: Type.Union([Type.String(), Type.Null()]),
  status: Type.Integer(),
});

export function accessRoutes(access: AccessService): RouteModule {
  const service = (): AccessService => access;
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    api.get(
      '/whoami',
      {
        schema: {
          tags,
          summary: 'The identity of the request: its name, roles, and whether it administers',
          response: { 200: Whoami, ...errorResponses },
        },
      },
      async (request) => {
        const identity = request.identity;
        if (!identity) return { name: 'anyone', roles: [], admin: true, kind: 'open' as const };
        return { name: identity.name, roles: [...identity.roles], admin: identity.admin, kind: identity.kind };
      },
    );
    api.get(
      '/auth/config',
      {
        schema: {
          tags,
          summary: "How the console logs in: the OpenID provider and the console's client, or null",
          response: { 200: AuthConfig, ...errorResponses },
        },
      },
      async () => {
        const provider = access.openIdProvider;
        const { issuer, clientId, audience, scope } = provider?.settings ?? {};
        if (provider === undefined || issuer === undefined || clientId === undefined) return { oidc: null };
        const { authorization_endpoint } = await provider.provider();
        return {
          oidc: { issuer, client_id: clientId, audience: audience ?? '', scope: scope ?? '', authorization_endpoint },
        };
      },
    );
    api.post(
      '/auth/token',
      {
        schema: {
          tags,
          summary: "The console's login: an authorization code (PKCE) exchanged at the OpenID provider",
          body: CodeExchange,
          response: { 200: LoginTokens, ...errorResponses },
        },
      },
      async (request) => {
        const provider = access.openIdProvider;
        if (provider?.settings.clientId === undefined)
          throw new NotFound('this server has no OpenID Connect login (STEWARD_OIDC_CLIENT_ID)', {
            code: 'feature_disabled',
          });
        return provider.exchangeCode(request.body);
      },
    );
    api.post(
      '/tokens',
      {
        schema: {
          tags,
          summary: 'Make an API token; its secret is answered this once',
          body: NewTokenBody,
          response: { 201: CreatedToken, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { id, token, record } = await service().createToken(request.body);
        return reply.status(201).send({ id, token, name: record.name, roles: record.roles, expires: record.expires });
      },
    );
    api.get(
      '/tokens',
      {
        schema: {
          tags,
          summary: 'The API tokens, oldest first, without their secrets',
          response: { 200: Type.Array(TokenInfo), ...errorResponses },
        },
      },
      async () => service().listTokens(),
    );
    api.delete(
      '/tokens/:id',
      {
        schema: {
          tags,
          summary: 'Revoke an API token',
          params: TokenParams,
          response: { 200: Type.Boolean(), ...errorResponses },
        },
      },
      async (request) => {
        await service().revokeToken(request.params.id);
        return true;
      },
    );
    api.get(
      '/roles',
      {
        schema: {
          tags,
          summary: 'Every role, by name',
          response: { 200: Type.Record(Type.String(), Role), ...errorResponses },
        },
      },
      async () => service().roles(),
    );
    api.get(
      '/roles/:role',
      {
        schema: { tags, summary: 'A role', params: RoleParams, response: { 200: Role, ...errorResponses } },
      },
      async (request) => service().role(request.params.role),
    );
    api.put(
      '/roles/:role',
      {
        schema: {
          tags,
          summary: 'Make or replace a role',
          params: RoleParams,
          body: Role,
          response: { 200: Role, 201: Role, ...errorResponses },
        },
      },
      async (request, reply) => {
        const created = await service().putRole(request.params.role, request.body);
        return reply.status(created ? 201 : 200).send(request.body);
      },
    );
    api.delete(
      '/roles/:role',
      {
        schema: {
          tags,
          summary: 'Remove a role; the tokens that name it keep the name and are granted nothing by it',
          params: RoleParams,
          response: { 200: Type.Boolean(), ...errorResponses },
        },
      },
      async (request) => {
        await service().removeRole(request.params.role);
        return true;
      },
    );
    api.get(
      '/audit',
      {
        schema: {
          tags,
          summary: 'Changes made through the API, newest first',
          querystring: AuditQuery,
          response: { 200: Type.Array(AuditEntry), ...errorResponses },
        },
      },
      async (request) => service().audit({ ...request.query, limit: Number(request.query.limit ?? 100) }),
    );
  };
  return { prefix: '/api', routes };
}
