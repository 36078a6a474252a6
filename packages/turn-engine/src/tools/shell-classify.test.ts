import { describe, expect, it } from 'vitest';
import { classifyShellCommand, splitSimpleCommands } from './shell-classify.js';

describe('classifyShellCommand', () => {
  it.each([
    'ls',
    'ls -la src',
    'pwd',
    'cat package.json',
    'head -n 20 src/index.ts',
    'tail -5 log.txt',
    'wc -l src/*.ts',
    'echo hello world',
    'grep -rn "TODO" src',
    "rg -n 'fn main' --glob '*.rs'",
    'find . -name "*.ts" -type f',
    'git status',
    'git diff HEAD~1 -- src',
    'git log --oneline -n 10',
    'git --no-pager show HEAD',
    'git branch -a',
    'git branch --list "feat/*"',
    'git remote -v',
    'git status && git diff',
    'cd src && ls',
    'cat a.txt | grep x | wc -l',
    'ls; pwd\nwc -l a.txt',
    'grep "a|b;c>d" file.txt',
  ])('%s → read', (command) => {
    expect(classifyShellCommand(command)).toBe('read');
  });

  it.each([
    'git commit -am wip',
    'git push origin main',
    'git checkout -b feature',
    'git branch new-branch',
    'git branch -D old',
    'git remote add origin url',
    'git -c core.pager=evil log',
    'git -C /elsewhere status',
    'git diff --output=patch.diff',
    'git log --ext-diff',
    'git grep -O foo',
    'git diff --no-index /etc/passwd a.txt',
    'git status && git stash',
    'ls && git reset --hard',
  ])('%s → git', (command) => {
    expect(classifyShellCommand(command)).toBe('git');
  });

  it.each([
    'rm -rf build',
    'echo hi > notes.txt',
    'echo hi >> notes.txt',
    'cat < in.txt',
    'ls && rm a',
    'ls; touch b',
    'cat a | tee b',
    'cat a | sh',
    'ls | xargs rm',
    'find . -delete',
    'find . -name x -exec rm {} ;',
    'find . -execdir rm {} +',
    'find . -fprint out.txt',
    'rg --pre ./evil.sh foo',
    'rg --pre=./evil.sh foo',
    'echo $(rm -rf x)',
    'echo `rm -rf x`',
    'echo "$(rm x)"',
    'echo $HOME',
    'ls &',
    'sleep 10 & ls',
    '(ls)',
    'ls # comment',
    'cat /etc/passwd',
    'cat ../other/secret',
    'cat ~/.ssh/id_rsa',
    'cat .*/secret',
    'grep -f/etc/passwd x',
    'grep --file=../x y',
    'cd',
    'cd -',
    'cd .. && ls',
    'FOO=bar ls',
    'npm test',
    'git status && npm install',
    'echo "unterminated',
    '',
    '   ',
  ])('%s → shell', (command) => {
    expect(classifyShellCommand(command)).toBe('shell');
  });
});

describe('splitSimpleCommands', () => {
  it('splits on separators outside quotes and removes quotes', () => {
    expect(splitSimpleCommands(`grep -n 'a b' "c;d" e\\ f | wc -l && ls || pwd; echo x\necho y`)).toEqual([
      ['grep', '-n', 'a b', 'c;d', 'e f'],
      ['wc', '-l'],
      ['ls'],
      ['pwd'],
      ['echo', 'x'],
      ['echo', 'y'],
    ]);
  });

  it('gives up on anything but words and separators', () => {
    for (const line of ['a > b', 'a < b', 'a & b', '$(a)', '`a`', '"$a"', '(a)', "'open", 'a #c']) {
      expect(splitSimpleCommands(line)).toBeUndefined();
    }
  });
});
