import { parseQuery } from './querystring';

describe('parseQuery', () => {
  it('reads what Fastify’s default parser reads, the same way', () => {
    const query = parseQuery('a&=x&b=1&b=2&b=3&c=a+b%2B%20c&d=e=f&&__proto__=p&%C3%A9t%C3%A9=%E2%9C%93');
    expect({ ...query }).toEqual({ a: '', '': 'x', b: ['1', '2', '3'], c: 'a b+ c', d: 'e=f', ['__proto__']: 'p', été: '✓' });
    expect(Object.getPrototypeOf(query)).toBeNull();
    expect({ ...parseQuery('') }).toEqual({});
  });
});
